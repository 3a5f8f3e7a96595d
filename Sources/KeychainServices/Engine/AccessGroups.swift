#if !canImport(Security)
import Foundation

/// The caller's access groups (its `keychain-access-groups` entitlement), with Apple's
/// rules: the first is the default for new items, `com.apple.token` is read-only, and
/// `*` stands for every group.
struct AccessGroups: Sendable {
    /// Every group, in entitlement order.
    let all: [String]

    init(_ groups: [String]) { all = groups }

    static let tokenGroup = "com.apple.token"

    /// Whether the caller may read items of every group (`*`).
    var readsEverything: Bool { all.contains("*") }

    /// The group new items go to when the caller names none.
    var defaultGroup: String? { all.first { $0 != "*" && $0 != Self.tokenGroup } ?? all.first }

    func canRead(_ group: String) -> Bool { readsEverything || all.contains(group) }

    func canWrite(_ group: String) -> Bool {
        group != Self.tokenGroup && (readsEverything || all.contains(group))
    }

    /// Groups the caller can write, for implicit update and delete.
    var writable: [String] { all.filter { $0 != Self.tokenGroup && $0 != "*" } }

    /// errSecMissingEntitlement for a group the caller may not use.
    static func missing(_ group: String, write: Bool) -> KeychainFailure {
        KeychainFailure(
            errSecMissingEntitlement,
            "This process is not entitled to \(write ? "write" : "read") access group '\(group)'.",
            recovery: "Add the group to keychain-access-groups (KEYSMITH_ACCESS_GROUPS or the KEYSMITH_ENTITLEMENTS plist; on iOS the app's entitlements and signing).")
    }

    static let none = KeychainFailure(
        errSecMissingEntitlement, "This process has no keychain access groups.",
        recovery: "Set KEYSMITH_ACCESS_GROUPS, a KEYSMITH_ENTITLEMENTS plist with keychain-access-groups, or KeychainEnvironment.accessGroups (on iOS: the keychain-access-groups entitlement).")
}
#endif
