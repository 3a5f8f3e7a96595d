// Two readers of Core Foundation's dictionary API, as swift-corelibs-foundation exports them
// (libFoundation.so, and libCoreFoundation.a in a static build) on Linux. KeychainServices
// defines Swift functions of the same public names for Apple-compatible code, so these are
// declared under other names and bound to the exported symbols with asm labels.
#ifndef KEYSMITH_CFOUNDATION_DICTIONARY_H
#define KEYSMITH_CFOUNDATION_DICTIONARY_H

#if defined(__linux__)
/// The number of entries of an `NSDictionary` (Core Foundation's `CFDictionaryGetCount`).
long keysmith_cf_dictionary_count(const void *_Nonnull dictionary) __asm__("CFDictionaryGetCount");

/// Every key and value of an `NSDictionary`, in one pass over its storage, written to `keys`
/// and `values` (each with room for the dictionary's count), unretained
/// (Core Foundation's `CFDictionaryGetKeysAndValues`).
void keysmith_cf_dictionary_keys_and_values(
    const void *_Nonnull dictionary, const void *_Nullable *_Nullable keys,
    const void *_Nullable *_Nullable values) __asm__("CFDictionaryGetKeysAndValues");
#endif

#endif
