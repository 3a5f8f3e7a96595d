#if !canImport(Security)
import Foundation

/// The caller's access groups (its `keychain-access-groups` entitlement), with Apple's
/// rules: the first is the default for new items, `com.apple.token` is read-only, and
/// `*` stands for every group.
struct AccessGroups: Sendable {
    /// Every group, in entitlement order.
    let all: [String]
    /// Whether the caller may read items of every group (`*`).
    let readsEverything: Bool

    init(_ groups: [String]) {
        all = groups
        readsEverything = Self.list(groups, contains: "*")
    }

    static let tokenGroup = "com.apple.token"

    /// Whether two group names are the same, byte for byte (Apple compares bytes; Swift's
    /// `==` would also equate canonically equivalent spellings such as `é` and `e` + U+0301).
    static func same(_ a: String, _ b: String) -> Bool { a.hasSameUTF8(as: b) }

    /// Whether `list` holds `group`, byte for byte.
    static func list(_ list: [String], contains group: String) -> Bool { list.contains { same($0, group) } }

    /// The group new items go to when the caller names none: the first writable one
    /// (`nil` when the process can write no group, e.g. only `com.apple.token`).
    var defaultGroup: String? { writable.first }

    func canRead(_ group: String) -> Bool { readsEverything || Self.list(all, contains: group) }

    func canWrite(_ group: String) -> Bool {
        !Self.same(group, Self.tokenGroup) && (readsEverything || Self.list(all, contains: group))
    }

    /// Groups the caller can write, for implicit update and delete.
    var writable: [String] { all.filter { !Self.same($0, Self.tokenGroup) && !Self.same($0, "*") } }

    /// errSecMissingEntitlement for a group the caller may not use.
    static func missing(_ group: String, write: Bool) -> KeychainFailure {
        KeychainFailure(
            errSecMissingEntitlement,
            "This process is not entitled to \(write ? "write" : "read") access group '\(group)'.",
            recovery: "Add the group to keychain-access-groups (KEYSMITH_ACCESS_GROUPS or the KEYSMITH_ENTITLEMENTS plist; on iOS the app's entitlements and signing).")
    }

    static let noWritableGroup = KeychainFailure(
        errSecMissingEntitlement, "This process has no access group it may write (com.apple.token is read-only).",
        recovery: "Add a writable group to keychain-access-groups, or name one with kSecAttrAccessGroup.")

    static let none = KeychainFailure(
        errSecMissingEntitlement, "This process has no keychain access groups.",
        recovery: "Set KEYSMITH_ACCESS_GROUPS, a KEYSMITH_ENTITLEMENTS plist with keychain-access-groups, or KeychainEnvironment.accessGroups (on iOS: the keychain-access-groups entitlement).")
}
#endif
