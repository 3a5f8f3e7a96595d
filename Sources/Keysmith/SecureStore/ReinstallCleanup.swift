import Foundation
import KeychainServices

/// Removing keychain leftovers after the app is deleted and installed again.
///
/// iOS keeps keychain items when an app is deleted; ordinary preferences (`UserDefaults`)
/// are deleted with it. So the cleanup keeps two marks, set together the first time it
/// runs: a launch marker in the preferences, and a sentinel item in the keychain. A later
/// launch that finds the keychain sentinel but not the preferences marker is the first
/// launch after a reinstall, and only then are the store's leftover items removed: the
/// namespaces this store recorded writing to (never other services that merely start with
/// its prefix, such as another store's `<prefix>.keys`). This is opt-in: call it early at
/// launch, before reading the store.
///
/// On Linux the marker is kept in preferences named after the store's service prefix, not in
/// the standard preferences, which Foundation names after the executable there: a renamed
/// executable, or a second program of the same app, is not a reinstall.
///
/// The marker is saved to disk the moment it is set (on Linux, Foundation does not save
/// preferences when a process exits), and when it cannot be saved the sentinel is removed
/// again and the call throws: a marker that did not reach the disk must never make the next
/// launch look like a reinstall.
///
/// ```swift
/// try store.removeLeftoversAfterReinstall(
///     cleanup: ReinstallCleanup(upgradeIndicatorKeys: ["onboarding_done"]))
/// ```
///
/// - Note: When neither mark exists (a fresh install, or the first launch of the version
///   that adopts the cleanup) both are set and nothing is removed, so adopting the cleanup
///   never wipes existing users' data. A cleanup only removes data after a reinstall of an
///   app version that had already run it. ``upgradeIndicatorKeys`` add a further guard: if
///   one is present, the launch is treated as an update even when the sentinel exists.
/// - Note: With a `nil` access group the store's namespaces are removed in every access
///   group the app can use (Apple's rule for queries without `kSecAttrAccessGroup`); give
///   the store an explicit access group to confine the cleanup to it.
public struct ReinstallCleanup: Sendable, Hashable {
    /// What a run found and did.
    public enum Outcome: Sendable, Hashable {
        /// The marker was present: an ordinary launch; nothing was removed.
        case notFirstLaunch
        /// The marker was missing but an upgrade indicator was present: an update from a
        /// version without the marker; the marker and sentinel were set and nothing was
        /// removed.
        case markedExistingInstall
        /// Neither the marker nor the keychain sentinel existed: a fresh install, or the
        /// first launch of the version that adopts the cleanup. Both were set; nothing was
        /// removed.
        case firstRun
        /// First launch after a reinstall (the keychain sentinel existed, the marker did
        /// not): the items of these namespaces were removed and the marker was set.
        case cleaned(namespaces: [Namespace])
    }

    /// The preferences key of the launch marker, or `nil` for `<servicePrefix>.installed`.
    public let markerKey: String?
    /// Preferences keys that earlier versions of the app always set; any of them present
    /// means an update, not a reinstall.
    public let upgradeIndicatorKeys: [String]

    /// Creates a cleanup.
    /// - Parameters:
    ///   - markerKey: The marker's preferences key, or `nil` for `<servicePrefix>.installed`.
    ///   - upgradeIndicatorKeys: Preferences keys that prove an existing install.
    public init(markerKey: String? = nil, upgradeIndicatorKeys: [String] = []) {
        self.markerKey = markerKey
        self.upgradeIndicatorKeys = upgradeIndicatorKeys
    }
}

extension SecureStore {
    /// Removes this store's leftover items on the first launch after a reinstall; see
    /// ``ReinstallCleanup``.
    ///
    /// - Parameters:
    ///   - defaults: The preferences that hold the marker and the upgrade indicators, or
    ///     `nil` for the platform's default: `.standard` on Apple platforms (the app's own
    ///     preferences); on Linux the marker is kept in preferences named after the store's
    ///     service prefix (`<servicePrefix>.plist` beside the program's own preferences),
    ///     because Linux names the standard preferences after the executable, and a renamed
    ///     executable or a second program of the same app must not look like a reinstall. A
    ///     marker an earlier version left in `.standard` still counts. The upgrade indicators
    ///     are read from `.standard`.
    ///   - cleanup: The marker key and upgrade indicators.
    /// - Returns: What was found and done.
    /// - Throws: ``SecureStoreError`` when the sentinel cannot be read or written, items
    ///   cannot be removed, or the marker cannot be saved to disk; the marker is then not
    ///   set (and a sentinel this call wrote is removed), so the next launch tries again
    ///   and never mistakes this install for a reinstall.
    @discardableResult
    public func removeLeftoversAfterReinstall(
        defaults: UserDefaults? = nil, cleanup: ReinstallCleanup = ReinstallCleanup()
    ) throws(SecureStoreError) -> ReinstallCleanup.Outcome {
        let marker = cleanup.markerKey ?? "\(configuration.servicePrefix).installed"
        let indicators = defaults ?? .standard
        let markerDefaults = defaults ?? SecureStore.storeDefaults(servicePrefix: configuration.servicePrefix)
        let registry: NamespaceRegistry
        let hasSentinel: Bool
        do {
            registry = try NamespaceRegistry(configuration: configuration)
            hasSentinel = try registry.hasSentinel()
        } catch {
            throw SecureStoreError(error, key: nil, namespace: nil)
        }
        var hasMarker = markerDefaults.bool(forKey: marker)
        if !hasMarker, defaults == nil, markerDefaults !== UserDefaults.standard, UserDefaults.standard.bool(forKey: marker) {
            // The marker an earlier version kept in the program's own preferences: keep it
            // where it is looked for now.
            try setMarker(marker, in: markerDefaults, registry: nil)
            hasMarker = true
        }
        if hasMarker {
            // The keychain was reset under an existing install (a restore to another device):
            // put the sentinel back, best effort, so that a later reinstall is recognized.
            if !hasSentinel { try? registry.setSentinel() }
            return .notFirstLaunch
        }
        let isUpdate = cleanup.upgradeIndicatorKeys.contains(where: { indicators.object(forKey: $0) != nil })
        if isUpdate || !hasSentinel {
            do {
                if !hasSentinel { try registry.setSentinel() }
            } catch {
                throw SecureStoreError(error, key: nil, namespace: nil)
            }
            try setMarker(marker, in: markerDefaults, registry: registry)
            log(.reinstallCleanup, key: nil, namespace: Namespace("*"), outcome: .skipped)
            return isUpdate ? .markedExistingInstall : .firstRun
        }
        let leftovers = try namespaces()
        for namespace in leftovers {
            try resetNamespace(namespace)
        }
        for namespace in try recordedNamespaces() {
            try? registry.forget(namespace)
        }
        try setMarker(marker, in: markerDefaults, registry: registry)
        log(.reinstallCleanup, key: nil, namespace: Namespace("*"), outcome: .success)
        return .cleaned(namespaces: leftovers)
    }

    /// The preferences that keep the launch marker when the caller names none: `.standard`
    /// on Apple platforms; on Linux, preferences named after the store, since the standard
    /// ones are named after the executable there.
    static func storeDefaults(servicePrefix: String) -> UserDefaults {
        #if canImport(Darwin)
            return .standard
        #else
            return UserDefaults(suiteName: servicePrefix) ?? .standard
        #endif
    }

    /// Sets the launch marker and saves it to disk now. If it cannot be saved, the sentinel
    /// is removed (best effort) so that the next launch is a first run, not a reinstall.
    private func setMarker(_ marker: String, in defaults: UserDefaults, registry: NamespaceRegistry?) throws(SecureStoreError) {
        defaults.set(true, forKey: marker)
        do {
            try PreferencesPersistence.save(
                defaults, after: "setting the launch marker '\(marker)'",
                consequence: "Reinstall cleanup was not recorded and will run again at the next launch (it will not "
                    + "remove anything then).", namespace: Namespace("*"))
        } catch {
            defaults.removeObject(forKey: marker)
            try? registry?.removeSentinel()
            throw error
        }
    }
}
