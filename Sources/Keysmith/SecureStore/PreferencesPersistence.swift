import Foundation

/// Saving `UserDefaults` to disk at the moment SecureStore changes them.
///
/// On Apple platforms the preferences daemon keeps every change, even if the app exits
/// right after. On Linux, Foundation keeps changes in memory and writes them to the
/// preferences file only when asked (`synchronize()`): nothing saves them when the process
/// exits. SecureStore's launch marker and its removal of migrated plaintext must survive
/// the process, or the next launch would look like a reinstall (and wipe the store), or the
/// plaintext would stay in the file. So every change SecureStore makes to preferences is
/// followed by ``save(_:after:consequence:key:namespace:)``, and a failed save is an error.
enum PreferencesPersistence {
    /// Writes `defaults` to disk now.
    /// - Parameters:
    ///   - defaults: The preferences just changed.
    ///   - change: What was changed, for the message (never a value).
    ///   - consequence: What the failure means for the caller and what to do.
    ///   - key: The store key involved, if any.
    ///   - namespace: The namespace involved.
    /// - Throws: ``SecureStoreError`` with code ``SecureStoreError/Code/unknown`` when the
    ///   preferences could not be written.
    static func save(
        _ defaults: UserDefaults, after change: String, consequence: String, key: String? = nil,
        namespace: Namespace
    ) throws(SecureStoreError) {
        #if canImport(Darwin)
            // The preferences daemon persists every change; synchronize() is not needed.
            return
        #else
            guard defaults.synchronize() else {
                throw SecureStoreError(
                    .unknown,
                    message: "The preferences could not be saved to disk after \(change). \(consequence)",
                    key: key, namespace: namespace.name,
                    fix: "Check that the preferences folder ($XDG_CONFIG_HOME, else ~/.config) exists and is writable, "
                        + "then launch again.")
            }
        #endif
    }
}
