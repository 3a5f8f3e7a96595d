import Foundation
import Keysmith
import KeychainServices

// `keysmith migrate-service OLD NEW`: moves every generic password of service OLD to
// service NEW with SecItem calls: write the new item (every attribute kept), read it back
// and compare, and only then delete the old one. SecureStore's ServiceMigration moves
// values through KeychainStore, which would drop the label and comment that carry a key's
// name and version, so it does not fit here; the write-verify-delete order is the same.

/// The `migrate-service` command.
enum MigrateServiceCommand {
    /// The attributes copied from an old item to its new one (the service is replaced).
    static let copiedAttributes: [String] = [
        kSecAttrAccount, kSecAttrLabel, kSecAttrComment, kSecAttrDescription, kSecAttrGeneric, kSecAttrAccessible,
        kSecAttrAccessGroup, kSecAttrSynchronizable, kSecAttrIsInvisible, kSecAttrIsNegative, kSecAttrCreator,
        kSecAttrType,
    ].map { $0 as String }

    static let command = Command(
        name: "migrate-service", group: .retrieval, synopsis: "OLD NEW",
        summary: "Move every generic password of service OLD to service NEW (idempotent)",
        details: "Moves the generic passwords of service OLD to service NEW, for a renamed service (after a "
            + "rename, data that looks lost is usually data left under the old name). Each item keeps its account, label, "
            + "comment (a key's version), kind, accessibility, access group and synchronizable state. For each "
            + "item the new copy is written, read back and compared, and only then is the old item deleted, so an "
            + "interrupted run loses nothing and the next run finishes the job. An item NEW already has with the "
            + "same secret is only deleted from OLD; one NEW has with a different secret is left in place under "
            + "OLD and reported (exit status 1). Running it again when everything moved does nothing and succeeds. "
            + "A terminal shows progress. Secrets are never printed.\n\n"
            + "Prints one line per item (moved, already there, conflict) and a summary. With --json: {\"from\", "
            + "\"to\", \"moved\": [account], \"alreadyPresent\": [account], \"conflicts\": [account]}.\n\n"
            + "Example:\n\n"
            + "  keysmith migrate-service com.example.old.keys com.example.app.keys",
        options: [], positionalNames: ["OLD", "NEW"]
    ) { invocation throws(CommandLineError) in
        try run(invocation)
    }

    /// One old item, as read.
    private struct OldItem {
        let attributes: NSDictionary
        let data: Data
        /// The account exactly as stored (text or bytes): the new item and every lookup use
        /// this value, never a conversion of it.
        var account: Any { attributes[kSecAttrAccount as String] ?? "" }
        /// The account for messages and sorting (bytes that are not UTF-8 in hexadecimal).
        var accountText: String { AttributeCatalog.describe(account as AnyObject) }
        var accessGroup: String? { attributes[kSecAttrAccessGroup as String] as? String }
        var synchronizable: Any { attributes[kSecAttrSynchronizable as String] ?? kCFBooleanFalse as Any }
    }

    private static func run(_ invocation: CommandInvocation) throws(CommandLineError) {
        let positionals = invocation.arguments.positionals
        guard positionals.count == 2 else {
            throw invocation.usageError("give the old and the new service: migrate-service OLD NEW")
        }
        let (old, new) = (positionals[0], positionals[1])
        guard !old.isEmpty, !new.isEmpty else { throw invocation.usageError("the service names may not be empty") }
        // Services compare byte for byte: "jos\u{E9}" and "jose\u{301}" are two services.
        guard ExactName(old) != ExactName(new) else {
            throw invocation.usageError("OLD and NEW are the same service; nothing to move")
        }
        let output = invocation.output
        let group = invocation.settings.queryAccessGroup

        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword as String,
            kSecAttrService as String: old,
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny as String,
            kSecMatchLimit as String: kSecMatchLimitAll as String,
            kSecReturnAttributes as String: kCFBooleanTrue as Any,
            kSecReturnData as String: kCFBooleanTrue as Any,
        ]
        if let group { query[kSecAttrAccessGroup as String] = group }
        var result: AnyObject?
        let listed = KeychainCallOutcome.capture { SecItemCopyMatching(query as CFDictionary, &result) }
        var items: [OldItem] = []
        if listed.succeeded {
            let rows = (result as? [NSDictionary]) ?? (result as? NSDictionary).map { [$0] } ?? []
            items = rows.compactMap { row in
                (row[kSecValueData as String] as? Data).map { OldItem(attributes: row, data: $0) }
            }
        } else if listed.status != errSecItemNotFound {
            throw invocation.keychainError(listed, .generic)
        }
        items.sort { ExactName($0.accountText) < ExactName($1.accountText) }

        var moved: [String] = []
        var alreadyPresent: [String] = []
        var conflicts: [String] = []
        let progress = output.progress("Moving items from \(old) to \(new)", total: items.count)
        for (index, item) in items.enumerated() {
            do throws(CommandLineError) {
                switch try migrate(item, from: old, to: new, invocation) {
                case .moved: moved.append(item.accountText)
                case .alreadyPresent: alreadyPresent.append(item.accountText)
                case .conflict: conflicts.append(item.accountText)
                }
            } catch {
                progress.finish()
                report(moved: moved, alreadyPresent: alreadyPresent, conflicts: conflicts, old: old, new: new, output)
                throw error
            }
            progress.update(index + 1)
        }
        progress.finish()
        report(moved: moved, alreadyPresent: alreadyPresent, conflicts: conflicts, old: old, new: new, output)
        if !conflicts.isEmpty {
            throw .failure(
                "\(conflicts.count) \(conflicts.count == 1 ? "item was" : "items were") left under service \"\(old)\": "
                    + "service \"\(new)\" already has a different secret for \(conflicts.joined(separator: ", ")).",
                recovery: "decide which copy to keep (keysmith find-generic-password -s SERVICE -a ACCOUNT shows "
                    + "the attributes of each), delete the other with delete-generic-password, and run "
                    + "migrate-service again.")
        }
    }

    private enum Outcome { case moved, alreadyPresent, conflict }

    /// Moves one item: write new, read back and compare, delete old.
    private static func migrate(_ item: OldItem, from old: String, to new: String, _ invocation: CommandInvocation)
        throws(CommandLineError) -> Outcome
    {
        var target: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword as String,
            kSecAttrService as String: new,
            kSecAttrAccount as String: item.account,
            kSecAttrSynchronizable as String: item.synchronizable,
        ]
        if let group = item.accessGroup { target[kSecAttrAccessGroup as String] = group }
        var oldItem = target
        oldItem[kSecAttrService as String] = old

        if let present = try readData(target, invocation) {
            guard present == item.data else { return .conflict }
            try delete(oldItem, invocation)
            return .alreadyPresent
        }
        var attributes: [String: Any] = [kSecClass as String: kSecClassGenericPassword as String]
        for name in copiedAttributes {
            if let value = item.attributes[name] { attributes[name] = value }
        }
        attributes[kSecAttrService as String] = new
        attributes[kSecValueData as String] = item.data
        let added = KeychainCallOutcome.capture { SecItemAdd(attributes as CFDictionary, nil) }
        guard added.succeeded else { throw invocation.keychainError(added, .generic) }
        guard try readData(target, invocation) == item.data else {
            throw .failure(
                "the new copy of account \"\(item.accountText)\" under service \"\(new)\" did not read back identical; the "
                    + "old item was kept.",
                recovery: "delete the new copy (keysmith delete-generic-password -s \(shellWord(new)) -a "
                    + "\(shellWord(item.accountText))) and run migrate-service again.")
        }
        try delete(oldItem, invocation)
        return .moved
    }

    /// The secret of the item `query` selects, or `nil` when there is none.
    private static func readData(_ query: [String: Any], _ invocation: CommandInvocation) throws(CommandLineError)
        -> Data?
    {
        var query = query
        query[kSecReturnData as String] = kCFBooleanTrue
        query[kSecMatchLimit as String] = kSecMatchLimitOne as String
        var result: AnyObject?
        let outcome = KeychainCallOutcome.capture { SecItemCopyMatching(query as CFDictionary, &result) }
        if outcome.status == errSecItemNotFound { return nil }
        guard outcome.succeeded else { throw invocation.keychainError(outcome, .generic) }
        return result as? Data
    }

    private static func delete(_ query: [String: Any], _ invocation: CommandInvocation) throws(CommandLineError) {
        let outcome = KeychainCallOutcome.capture { SecItemDelete(query as CFDictionary) }
        guard outcome.succeeded || outcome.status == errSecItemNotFound else {
            throw invocation.keychainError(outcome, .generic)
        }
    }

    private static func report(
        moved: [String], alreadyPresent: [String], conflicts: [String], old: String, new: String, _ output: Output
    ) {
        if output.json {
            output.printJSON([
                "from": old, "to": new, "moved": moved, "alreadyPresent": alreadyPresent, "conflicts": conflicts,
            ])
            return
        }
        let total = moved.count + alreadyPresent.count + conflicts.count
        if total == 0 {
            output.info(
                "Nothing to move: service \"\(old)\" has no generic passwords (already migrated, or never used).")
            return
        }
        var table = ColumnTable(headers: ["ACCOUNT", "RESULT"])
        for account in moved { table.add([account, "moved"]) }
        for account in alreadyPresent { table.add([account, "already under the new service; old copy deleted"]) }
        for account in conflicts { table.add([account, "CONFLICT: different secret under the new service; kept"]) }
        for line in table.lines() { output.info(line) }
        output.info(
            "Moved \(moved.count) generic \(moved.count == 1 ? "password" : "passwords") from service \"\(old)\" to "
                + "\"\(new)\"; \(alreadyPresent.count) already there, \(conflicts.count) "
                + "\(conflicts.count == 1 ? "conflict" : "conflicts").")
    }
}
