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
/// What a reinstall is on Linux: nothing deletes a program's preferences when it is removed,
/// and the same program may run with another `HOME` or `XDG_CONFIG_HOME` (a service, a cron
/// job, a CI job) and so find no preferences, while it uses the same keychain. So the
/// sentinel records where the preferences it was set with live (`$XDG_CONFIG_HOME`, or
/// `$HOME/.config`), and a launch without the marker is the first after a reinstall only
/// where the preferences were marked before and are gone now. A launch from a location the
/// sentinel does not list adds it and removes nothing (``Outcome/markedExistingInstall``);
/// so does one that finds a sentinel written before locations were recorded.
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

extension ReinstallCleanup {
    /// Where this process's preferences live, as the reinstall sentinel records it on Linux:
    /// `$XDG_CONFIG_HOME` when it is an absolute path, else `$HOME/.config`; `nil` on Apple
    /// platforms.
    static func preferencesLocation(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        #if canImport(Darwin)
            return nil
        #else
            if let configuration = environment["XDG_CONFIG_HOME"], configuration.hasPrefix("/") { return configuration }
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            return home + "/.config"
        #endif
    }
}

extension NamespaceRegistry {
    /// The key of the reinstall sentinel (as ``NamespaceRegistry`` names it).
    private var sentinelItemKey: String { "installed" + "\u{1F}" + prefix }

    /// The preferences locations the sentinel lists (one a line); `nil` without a
    /// sentinel, empty for one written before locations were recorded (`1`).
    func sentinelLocations() throws(KeychainError) -> [String]? {
        guard let value = try store.data(for: sentinelItemKey) else { return nil }
        let text = String(decoding: value, as: UTF8.self)
        if text == "1" { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    /// Writes the sentinel listing `locations` (`1` when there are none).
    func setSentinel(locations: [String]) throws(KeychainError) {
        let text = locations.isEmpty ? "1" : locations.joined(separator: "\n")
        try store.set(Data(text.utf8), for: sentinelItemKey)
    }
}

extension SecureStore {
    /// Whether `locations` holds `location`, compared byte for byte: locations are paths,
    /// and two spellings Swift's `==` equates ("é" and "e\u{301}") are two directories.
    static func lists(_ locations: [String], _ location: String) -> Bool {
        locations.contains { $0.utf8.elementsEqual(location.utf8) }
    }

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
        try removeLeftoversAfterReinstall(
            defaults: defaults, cleanup: cleanup, preferencesLocation: ReinstallCleanup.preferencesLocation())
    }

    /// ``removeLeftoversAfterReinstall(defaults:cleanup:)`` with the preferences location
    /// given (`nil` on Apple platforms, where the app's preferences have one place).
    func removeLeftoversAfterReinstall(
        defaults: UserDefaults?, cleanup: ReinstallCleanup, preferencesLocation location: String?
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
        let locations = location == nil ? nil : (try? registry.sentinelLocations()) ?? nil
        if hasMarker {
            // The keychain was reset under an existing install (a restore to another device):
            // put the sentinel back, best effort, so that a later reinstall is recognized.
            if !hasSentinel { try? registry.setSentinel(locations: location.map { [$0] } ?? []) }
            // A sentinel of an earlier version, or one set from another location: this one
            // is added, best effort.
            if hasSentinel, let location, let locations, !Self.lists(locations, location) {
                try? registry.setSentinel(locations: locations + [location])
            }
            return .notFirstLaunch
        }
        let isUpdate = cleanup.upgradeIndicatorKeys.contains(where: { indicators.object(forKey: $0) != nil })
        // Linux: preferences marked somewhere else, or a sentinel that does not say where.
        let elsewhere = hasSentinel && location.map { location in !Self.lists(locations ?? [], location) } == true
        if isUpdate || !hasSentinel || elsewhere {
            do {
                if !hasSentinel || elsewhere {
                    try registry.setSentinel(locations: (locations ?? []) + (location.map { [$0] } ?? []))
                }
            } catch {
                throw SecureStoreError(error, key: nil, namespace: nil)
            }
            try setMarker(marker, in: markerDefaults, registry: registry)
            log(.reinstallCleanup, key: nil, namespace: Namespace("*"), outcome: .skipped)
            return isUpdate || elsewhere ? .markedExistingInstall : .firstRun
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
