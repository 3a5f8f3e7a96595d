import Foundation
import KeychainServices

/// Removing keychain leftovers after the app is deleted and installed again (seed 001,
/// 5.1 "坑二", seed 004, 6.2).
///
/// iOS keeps keychain items when an app is deleted; ordinary preferences (`UserDefaults`)
/// are deleted with it. So a launch marker in the preferences tells a first launch after a
/// (re)install apart from an ordinary launch: if the marker is missing, the store's
/// leftover items (every namespace under its service prefix) are removed, then the marker
/// is set. This is opt-in: call it early at launch, before reading the store.
///
/// ```swift
/// try store.removeLeftoversAfterReinstall(
///     cleanup: ReinstallCleanup(upgradeIndicatorKeys: ["onboarding_done"]))
/// ```
///
/// - Note: The first version that adopts this must not wipe its existing users' data on
///   update: list a preferences key that earlier versions always set in
///   ``upgradeIndicatorKeys``. If one is present, the launch is an update, and only the
///   marker is set.
public struct ReinstallCleanup: Sendable, Hashable {
    /// What a run found and did.
    public enum Outcome: Sendable, Hashable {
        /// The marker was present: an ordinary launch; nothing was removed.
        case notFirstLaunch
        /// The marker was missing but an upgrade indicator was present: an update from a
        /// version without the marker; the marker was set and nothing was removed.
        case markedExistingInstall
        /// First launch after an install: the items of these namespaces were removed (none
        /// on a fresh install) and the marker was set.
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
    /// Removes this store's leftover items on the first launch after a (re)install; see
    /// ``ReinstallCleanup``.
    ///
    /// - Parameters:
    ///   - defaults: The preferences that hold the marker (default `.standard`).
    ///   - cleanup: The marker key and upgrade indicators.
    /// - Returns: What was found and done.
    /// - Throws: ``SecureStoreError`` when items cannot be removed; the marker is then not
    ///   set, so the next launch tries again.
    @discardableResult
    public func removeLeftoversAfterReinstall(
        defaults: UserDefaults = .standard, cleanup: ReinstallCleanup = ReinstallCleanup()
    ) throws(SecureStoreError) -> ReinstallCleanup.Outcome {
        let marker = cleanup.markerKey ?? "\(configuration.servicePrefix).installed"
        if defaults.bool(forKey: marker) { return .notFirstLaunch }
        if cleanup.upgradeIndicatorKeys.contains(where: { defaults.object(forKey: $0) != nil }) {
            defaults.set(true, forKey: marker)
            log(.reinstallCleanup, key: nil, namespace: Namespace("*"), outcome: .skipped)
            return .markedExistingInstall
        }
        let leftovers = try namespaces()
        for namespace in leftovers {
            try resetNamespace(namespace)
        }
        defaults.set(true, forKey: marker)
        log(.reinstallCleanup, key: nil, namespace: Namespace("*"), outcome: .success)
        return .cleaned(namespaces: leftovers)
    }
}
