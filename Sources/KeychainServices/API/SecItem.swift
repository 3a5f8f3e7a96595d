#if !canImport(Security)
import Foundation

// The four SecItem functions, with the signatures of Apple's Swift overlay. Each one
// parses the dictionary with Apple's rules, checks the caller's access groups, and runs
// the operation on the keychain of `KeychainEnvironment.current`. Failures return the
// status Apple returns; the precise cause is kept in `KeychainDiagnostics` for the thread.
// Their results are discardable, as every C function's is when Swift imports it on Apple
// platforms: `SecItemDelete(query)` alone compiles without a warning there, and here.

/// Adds one item to the keychain.
///
/// - Parameters:
///   - attributes: The item's class (`kSecClass`), attributes (`kSecAttr…`), secret
///     (`kSecValueData`) and optionally return keys (`kSecReturn…`).
///   - result: Receives what the return keys ask for (`nil` when none), like
///     SecItemCopyMatching's result for the new item. Pass `nil` if not needed.
/// - Returns: `errSecSuccess`, or `errSecDuplicateItem` when an item with the same primary
///   key exists (genp: service + account + access group + synchronizable), `errSecParam`
///   for a malformed dictionary, `errSecMissingEntitlement` for an access group the process
///   is not entitled to, and the other `errSec…` codes Apple documents.
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    perform(.add, attributes) { query, groups, engine in
        let value = try engine.add(query, groups: groups)
        result?.pointee = value
    }
}

/// Finds items that match a query and returns their data, attributes or references.
///
/// - Parameters:
///   - query: The class, the attributes to match (exact, byte-wise), `kSecMatchLimit`
///     (default one) and the return keys.
///   - result: Receives `Data`, a dictionary, or an array of them (for
///     `kSecMatchLimitAll`), as on iOS. Untouched when nothing matches.
/// - Returns: `errSecSuccess`, `errSecItemNotFound` when nothing matches (items in access
///   groups the process cannot read are invisible), or another `errSec…` code.
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    perform(.copyMatching, query) { parsed, groups, engine in
        let value = try engine.copyMatching(parsed, groups: groups)
        result?.pointee = value
    }
}

/// Changes every item that matches a query, atomically.
///
/// - Parameters:
///   - query: The class and the attributes to match. Return and match-limit keys are not
///     allowed (`errSecParam`).
///   - attributesToUpdate: The attributes to change and/or a new `kSecValueData`. Only
///     attributes are allowed here (`errSecNoSuchAttr` for anything else).
/// - Returns: `errSecSuccess`, `errSecItemNotFound` when nothing matches,
///   `errSecDuplicateItem` when a change would make two items collide (then nothing is
///   changed), or another `errSec…` code.
@discardableResult
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    perform(.update, query) { parsed, groups, engine in
        guard let itemClass = parsed.itemClass else { throw KeychainFailure.param("The query has no kSecClass.") }
        let changes = try QueryParser.parseChanges(attributesToUpdate, itemClass: itemClass)
        try engine.update(parsed, changes: changes, groups: groups)
    }
}

/// Deletes every item that matches a query.
///
/// - Parameter query: The class and the attributes to match. `kSecMatchLimit:
///   kSecMatchLimitAll` is accepted with macOS's meaning (every match, as without it);
///   other match keys are `errSecParam`, as on iOS; return keys are ignored.
/// - Returns: `errSecSuccess`, `errSecItemNotFound` when nothing matches, or another
///   `errSec…` code.
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    perform(.delete, query) { parsed, groups, engine in
        try engine.delete(parsed, groups: groups)
    }
}

/// The shared steps of every SecItem call, in Apple's order (reference §3.1): internal
/// attributes (`clip`), entitlements (none at all), explicit write groups of update and
/// delete, parsing, explicit groups of add and copy, then the operation.
private func perform(
    _ operation: Operation, _ dictionary: NSDictionary,
    _ body: (ItemQuery, AccessGroups, KeychainEngine) throws -> Void
) -> OSStatus {
    recordingOutcome {
        // Results are cast as on iOS however the program is linked (FoundationBridging.swift).
        guard FoundationBridging.linked else { throw KeychainFailure(errSecInternal, "Foundation's bridging is missing.") }
        let environment = KeychainEnvironment.current
        let groups = AccessGroups(environment.accessGroups)
        let (entries, problem) = QueryParser.readEntries(dictionary)
        if entries.contains("clip") { throw QueryParser.clipRefused }
        try requireAccessGroups(groups, in: environment)
        if let problem { throw problem }
        // Update and delete check an explicit group before anything else (Apple's order);
        // the group may be given as a string or as its UTF-8 bytes.
        if operation == .update || operation == .delete, let value = entries.value(for: "agrp"),
            let group = QueryParser.string(value) ?? QueryParser.bytes(value).flatMap({ String(data: $0, encoding: .utf8) }),
            !groups.canWrite(group)
        {
            throw AccessGroups.missing(group, write: true)
        }
        let query = try QueryParser.parse(entries, for: operation)
        let engine = try openEngine(for: operation, query, groups: groups, in: environment)
        try body(query, groups, engine)
    }
}

// The steps of `perform` that the typed reads (KeychainTypedReads.swift) share, so that
// both check and report the same way.

/// Runs one call: its failure becomes the status it returns, and the thread's diagnosis
/// records it (or is cleared on success).
func recordingOutcome(_ body: () throws -> Void) -> OSStatus {
    do {
        try body()
        KeychainDiagnostics.record(nil)
        return errSecSuccess
    } catch let failure as KeychainFailure {
        KeychainDiagnostics.record(failure)
        return failure.status
    } catch {
        let failure = KeychainFailure(errSecInternal, "Unexpected failure: \(error)")
        KeychainDiagnostics.record(failure)
        return failure.status
    }
}

/// Refuses a process without access groups, saying why when the configuration is the
/// cause (a missing entitlements file, an Xcode variable that cannot be expanded).
func requireAccessGroups(_ groups: AccessGroups, in environment: KeychainEnvironment) throws {
    guard groups.all.isEmpty else { return }
    if let issue = environment.configurationIssue {
        throw KeychainFailure(errSecMissingEntitlement, issue.problem, recovery: issue.fix)
    }
    throw AccessGroups.none
}

/// After parsing: the explicit group of the query against the process's groups (write
/// groups for a write), then the engine of the environment's keychain (opened for
/// writing, and created, only as the operation needs).
func openEngine(
    for operation: Operation, _ query: ItemQuery, groups: AccessGroups, in environment: KeychainEnvironment
) throws -> KeychainEngine {
    let isWrite = operation != .copyMatching
    if let group = query.accessGroup, !(isWrite ? groups.canWrite(group) : groups.canRead(group)) {
        throw AccessGroups.missing(group, write: isWrite)
    }
    return try KeychainEngine.engine(for: environment.directory, forWriting: isWrite, creating: operation == .add)
}
#endif
