#ifndef KEYSMITH_LOAD_ON_USE_PRIVATE_H
#define KEYSMITH_LOAD_ON_USE_PRIVATE_H
#include <dlfcn.h>
#include <pthread.h>

// One library, opened once on first use (thread-safe), and one of its functions.
struct load_on_use_library {
    const char *file;
    pthread_once_t once;
    void *handle;
};

#define LOAD_ON_USE_LIBRARY(file_name) { (file_name), PTHREAD_ONCE_INIT, NULL }

// The library's own definition of `name`, or NULL when the library or the symbol is missing.
__attribute__((visibility("hidden")))
void *load_on_use_symbol(struct load_on_use_library *library, void (*open)(void), const char *name);

// Declares the pointer to the library's definition of FUNCTION, with FUNCTION's own type,
// resolved once (a data race on the cached pointer is benign: every thread stores the same value).
#define LOAD_ON_USE_RESOLVE(library, open, function) \
    static __typeof__(&function) real_##function; \
    __typeof__(&function) resolved_##function = __atomic_load_n(&real_##function, __ATOMIC_ACQUIRE); \
    if (resolved_##function == NULL) { \
        resolved_##function = (__typeof__(&function))load_on_use_symbol(&(library), (open), #function); \
        __atomic_store_n(&real_##function, resolved_##function, __ATOMIC_RELEASE); \
    }
// Whether tpm2-tss (the TCTI loader, ESYS, the marshalling library) can be loaded.
__attribute__((visibility("hidden")))
int load_on_use_tss2_available(void);
#endif
