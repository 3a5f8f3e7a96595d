#if !canImport(Security)
import Foundation

// Reads for Keysmith's typed layer (KeychainStore, KeychainKeySource) without a query
// dictionary: the search is built as the parsed query SecItemCopyMatching would build from
// the equivalent dictionary, and runs through the same steps (access groups, explicit
// group, engine, rollback check, lock state, access control) and the same engine call, so
// it answers, fails and records its diagnosis exactly as SecItemCopyMatching does. Only the
// parsing of the dictionary and the shaping of the result are left out.

/// A generic-password search, as the typed layer makes it: one service, optionally an
/// account, a label and an access group, the data and the attributes of every match.
@_spi(Keysmith)
public struct GenericPasswordSearch: Sendable {
    /// `kSecAttrService`.
    public var service: String
    /// `kSecAttrAccount`, or `nil` for any account.
    public var account: String?
    /// `kSecAttrLabel`, or `nil` for any label.
    public var label: String?
    /// `kSecAttrAccessGroup`, or `nil` for every group the process can read.
    public var accessGroup: String?
    /// `kSecAttrSynchronizable`, or `nil` to leave it out of the query (then only items
    /// that are not synchronizable match, as on Apple platforms).
    public var synchronizable: Bool?
    /// `kSecMatchLimitAll` when `true`, `kSecMatchLimitOne` when `false`.
    public var matchesAll: Bool
    /// `kSecReturnData`: whether the items' data is read (and access control evaluated).
    public var returnsData: Bool
    /// `kSecUseOperationPrompt`: the reason shown when access control asks the user.
    public var operationPrompt: String?

    /// Creates a search.
    /// - Parameters:
    ///   - service: `kSecAttrService`.
    ///   - account: `kSecAttrAccount`, or `nil` for any account.
    ///   - label: `kSecAttrLabel`, or `nil` for any label.
    ///   - accessGroup: `kSecAttrAccessGroup`, or `nil` for every readable group.
    ///   - synchronizable: `kSecAttrSynchronizable`, or `nil` to leave it out.
    ///   - matchesAll: `kSecMatchLimitAll` (`true`) or `kSecMatchLimitOne` (`false`).
    ///   - returnsData: `kSecReturnData`.
    ///   - operationPrompt: `kSecUseOperationPrompt`, or `nil`.
    public init(
        service: String, account: String? = nil, label: String? = nil, accessGroup: String? = nil,
        synchronizable: Bool? = nil, matchesAll: Bool, returnsData: Bool, operationPrompt: String? = nil
    ) {
        self.service = service
        self.account = account
        self.label = label
        self.accessGroup = accessGroup
        self.synchronizable = synchronizable
        self.matchesAll = matchesAll
        self.returnsData = returnsData
        self.operationPrompt = operationPrompt
    }

    /// Whether `searches` have the layout of one key's two searches, the first by label (no
    /// account), the second by account (no label), so that the engine may read them as one
    /// search. The engine checks the rest itself (one service, access group and
    /// synchronizable filter, every item wanted) and reads any other pair search by search.
    static func canBeReadTogether(_ searches: [GenericPasswordSearch]) -> Bool {
        searches.count == 2 && searches[0].label != nil && searches[0].account == nil
            && searches[1].account != nil && searches[1].label == nil
    }

    /// The `SecItemCopyMatching` dictionary this search stands for (with
    /// `kSecReturnAttributes`): ``KeychainCopyGenericPasswords(_:_:)`` answers as
    /// `SecItemCopyMatching` answers it.
    public var equivalentQuery: [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecMatchLimit as String: matchesAll ? kSecMatchLimitAll : kSecMatchLimitOne,
            kSecReturnAttributes as String: true,
        ]
        if let account { query[kSecAttrAccount as String] = account }
        if let label { query[kSecAttrLabel as String] = label }
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        if let synchronizable { query[kSecAttrSynchronizable as String] = synchronizable }
        if returnsData { query[kSecReturnData as String] = true }
        if let operationPrompt { query[kSecUseOperationPrompt as String] = operationPrompt }
        return query
    }

    /// The parsed query `SecItemCopyMatching` makes of ``equivalentQuery``.
    var itemQuery: ItemQuery {
        var query = ItemQuery()
        query.itemClass = .genericPassword
        query.attributes = AttributeTable(minimumCapacity: 4)
        query.attributes["svce"] = .string(service)
        if let account { query.attributes["acct"] = .string(account) }
        if let label { query.attributes["labl"] = .string(label) }
        if let accessGroup { query.attributes["agrp"] = .string(accessGroup) }
        if let synchronizable { query.sync = .only(synchronizable) }
        query.limit = matchesAll ? .many(nil) : .one
        query.hasMatchKeys = true
        query.returnAttributes = true
        query.returnData = returnsData
        query.operationPrompt = operationPrompt
        return query
    }
}

/// One generic password found by ``KeychainCopyGenericPasswords(_:_:)``: the attributes
/// the typed layer reads, and the data.
@_spi(Keysmith)
public struct GenericPasswordItem: Sendable {
    /// `kSecAttrAccount`, when it is a string (as `as? String` reads the attribute
    /// dictionary's value).
    public let account: String?
    /// `kSecAttrLabel`, when it is a string.
    public let label: String?
    /// `kSecAttrComment`, when it is a string.
    public let comment: String?
    /// `kSecAttrAccessGroup`.
    public let accessGroup: String?
    /// The item's data, when the search returns data and the item has some (a copy; the
    /// keychain's own buffer is zeroed when it is released).
    public let data: Data?
    /// Whether the item is behind access control (`kSecAttrAccessControl`): reading its
    /// data is an evaluation of its policy.
    public let isAccessControlled: Bool

    /// The item as the search returns it: the data only when asked for (a record always
    /// carries its stored secret, which for an item behind access control is still sealed
    /// unless the search opened it).
    init(_ record: ItemRecord, withData: Bool) {
        func string(_ tag: String) -> String? {
            if case .string(let value)? = record.attributes[tag] { return value }
            return nil
        }
        account = string("acct")
        label = string("labl")
        comment = string("icmt")
        accessGroup = string("agrp")
        if case .accessControl? = record.attributes["accc"] { isAccessControlled = true } else { isAccessControlled = false }
        if withData, !record.sealedForAccessControl, let secret = record.secret {
            data = secret.withUnsafeBytes { Data($0) }
        } else {
            data = nil
        }
    }
}

/// Finds the generic passwords `search` describes, as `SecItemCopyMatching` does for
/// ``GenericPasswordSearch/equivalentQuery``: the same checks in the same order, the same
/// statuses, and the same diagnosis recorded for the thread (``KeychainDiagnostics``).
/// - Parameters:
///   - search: The search.
///   - result: Receives the items (one at most unless ``GenericPasswordSearch/matchesAll``);
///     untouched when the call fails.
/// - Returns: `errSecSuccess`, `errSecItemNotFound` when nothing matches, or the status
///   `SecItemCopyMatching` returns for the failure.
@_spi(Keysmith)
public func KeychainCopyGenericPasswords(_ search: GenericPasswordSearch, _ result: inout [GenericPasswordItem]) -> OSStatus {
    var found: [GenericPasswordItem] = []
    let status = recordingOutcome {
        let environment = KeychainEnvironment.current
        let groups = AccessGroups(environment.accessGroups)
        try requireAccessGroups(groups, in: environment)
        let query = search.itemQuery
        let engine = try openEngine(for: .copyMatching, query, groups: groups, in: environment)
        let records = try engine.matchingRecords(query, groups: groups)
        found.reserveCapacity(records.count)
        for record in records { found.append(GenericPasswordItem(record, withData: search.returnsData)) }
    }
    if status == errSecSuccess { result = found }
    return status
}

/// Runs several searches in one call, as the same `SecItemCopyMatching` calls made one
/// after the other would answer them, with one rollback check and one read connection
/// for all (``KeychainEngine/matchingRecords(of:groups:readTogether:)``).
/// - Parameters:
///   - searches: The searches, in the order separate calls would make them.
///   - results: Receives one array per search (empty where its call would report
///     `errSecItemNotFound`); untouched when the call fails.
///   - failedSearch: Receives the index of the search whose call would report the
///     failure (the first one that would fail), or `nil` on success.
/// - Returns: `errSecSuccess`, or the status of the first failure separate calls would
///   report.
@_spi(Keysmith)
public func KeychainCopyGenericPasswords(
    _ searches: [GenericPasswordSearch], _ results: inout [[GenericPasswordItem]], failedSearch: inout Int?
) -> OSStatus {
    var found: [[GenericPasswordItem]] = []
    var failed: Int?
    let status = recordingOutcome {
        guard !searches.isEmpty else { return }
        failed = 0
        let environment = KeychainEnvironment.current
        let groups = AccessGroups(environment.accessGroups)
        try requireAccessGroups(groups, in: environment)
        let queries = searches.map(\.itemQuery)
        let engine: KeychainEngine
        do {
            engine = try openEngine(for: .copyMatching, queries[0], groups: groups, in: environment)
        } catch let failure as KeychainFailure where failure.status == errSecItemNotFound {
            // No keychain yet: every search finds nothing, after its own group check.
            for (index, query) in queries.enumerated().dropFirst() {
                failed = index
                if let group = query.accessGroup, !groups.canRead(group) { throw AccessGroups.missing(group, write: false) }
            }
            failed = nil
            found = Array(repeating: [], count: searches.count)
            return
        }
        let records: [[ItemRecord]]
        do {
            records = try engine.matchingRecords(
                of: queries, groups: groups, readTogether: GenericPasswordSearch.canBeReadTogether(searches))
        } catch let failure as KeychainEngine.SearchFailure {
            failed = failure.index
            throw failure.failure
        }
        failed = nil
        found = zip(searches, records).map { search, records in
            records.map { GenericPasswordItem($0, withData: search.returnsData) }
        }
    }
    failedSearch = failed
    if status == errSecSuccess { results = found }
    return status
}
#endif
