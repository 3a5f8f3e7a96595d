import Foundation
import KeychainServices

// Moving secrets out of plaintext preferences and files: values that an older version kept
// in UserDefaults or in a JSON/plist file are written to the keychain, verified, and only
// then removed from the plaintext store.

extension SecureStore {
    /// Moves values from `UserDefaults` into `namespace`, then removes them from the defaults.
    ///
    /// For each key: if the keychain already has the same value, the plaintext copy is
    /// removed (an earlier run was interrupted); if it has a different value, both are kept
    /// and the key is reported in ``MigrationReport/conflicts``; otherwise the value is
    /// written, read back and compared, and only then removed from the defaults. Each
    /// removal is saved to disk at once (`synchronize()`), so the plaintext is gone from
    /// the preferences file even if the process exits right after. Idempotent and
    /// crash-safe: run it at every launch.
    ///
    /// Values are stored as ``set(_:for:in:)`` would store them: strings raw, `Data` as
    /// base64 JSON, numbers, Booleans, arrays and dictionaries as JSON. A value that cannot
    /// be represented (for example a dictionary holding a `Date`), or that exceeds the size
    /// limit, is skipped and left in the defaults; the report says why.
    ///
    /// - Parameters:
    ///   - defaults: The preferences that hold the plaintext values.
    ///   - keys: The defaults keys to move.
    ///   - namespace: The namespace the values move to (default ``Namespace/default``).
    ///   - rename: The keychain key for a defaults key (default: the same name).
    /// - Returns: What happened to each key.
    /// - Throws: ``SecureStoreError`` from the first key whose keychain write fails; that
    ///   key stays in the defaults, keys before it are fully migrated.
    ///   ``SecureStoreError/Code/unknown`` when the preferences cannot be saved after a
    ///   removal: the value is safely in the keychain, but its plaintext copy may still be on
    ///   disk; the next run removes it.
    @discardableResult
    public func migratePlaintext(
        from defaults: UserDefaults, keys: [String], in namespace: Namespace = .default,
        rename: (String) -> String = { $0 }
    ) throws(SecureStoreError) -> MigrationReport {
        var report = MigrationReport()
        for plainKey in keys {
            let key = rename(plainKey)
            let outcome = try migrateOne(key: key, namespace: namespace, plaintext: defaults.object(forKey: plainKey))
            switch outcome {
            case .migrated: report.migrated.append(key)
            case .alreadyPresent: report.alreadyPresent.append(key)
            case .conflict:
                report.conflicts.append(key)
                continue
            case .absent: continue
            case .skipped(let reason):
                report.skipped[key] = reason
                continue
            }
            defaults.removeObject(forKey: plainKey)
            try PreferencesPersistence.save(
                defaults, after: "removing the plaintext copy of '\(plainKey)'",
                consequence: "The value is in the keychain, but its plaintext copy may still be in the preferences "
                    + "file on disk; run the migration again to remove it.", key: key, namespace: namespace)
        }
        return report
    }

    /// Moves values from a JSON or property-list file (a top-level dictionary) into
    /// `namespace`, then removes them from the file: the file is deleted when nothing is
    /// left in it, otherwise rewritten, in its format, with the keys that were not migrated.
    ///
    /// Same rules as ``migratePlaintext(from:keys:in:rename:)``: keychain first, verified,
    /// then the plaintext copy; a different value already in the keychain is a conflict
    /// (both kept); idempotent and crash-safe. A missing file is nothing to do.
    ///
    /// The rewrite never loosens the file: the new contents replace the file atomically (a
    /// temporary file beside it, flushed to disk, renamed over it) with the file's own mode,
    /// owner and group. A symbolic link is followed: the file it points to is rewritten (or
    /// deleted when empty, together with the link) and the link is kept, so no copy of a
    /// migrated secret stays behind the link. A file with several hard links is refused
    /// before anything moves, because the other names would keep the secrets. The rewrite
    /// happens in the folder the file was read from (a path changed meanwhile cannot
    /// redirect it), and only if the file was not changed since it was read; a changed file
    /// is left as it is and the call throws (the next run finishes the job).
    ///
    /// - Parameters:
    ///   - fileURL: The file, `.json` or `.plist` (the format is detected from the content).
    ///   - keys: The keys to move, or `nil` for every key of the file.
    ///   - namespace: The namespace the values move to (default ``Namespace/default``).
    /// - Returns: What happened to each key.
    /// - Throws: ``SecureStoreError``: ``SecureStoreError/Code/decodingFailed`` when the file
    ///   is not a JSON or property-list dictionary, or holds keys that differ only in Unicode
    ///   form (`jos\u{E9}`, `jose\u{301}`), which Foundation's parsers read as one key (in a
    ///   property list, any key with characters of several Unicode forms: the parsed file
    ///   cannot tell whether it had a twin); nothing is moved then; ``SecureStoreError/Code/invalidValue``
    ///   when it is not a regular file, has several hard links, or belongs to another user
    ///   (nothing is moved then); ``SecureStoreError/Code/unknown`` when it cannot be
    ///   rewritten (the message names the keys whose plaintext copies are still in it; they
    ///   are safely in the keychain, and the next run removes them); or a keychain error.
    ///   The file keeps every key not yet migrated.
    @discardableResult
    public func migratePlaintext(
        fromFile fileURL: URL, keys: [String]? = nil, in namespace: Namespace = .default
    ) throws(SecureStoreError) -> MigrationReport {
        var report = MigrationReport()
        guard let file = try PlaintextFile.open(fileURL, namespace: namespace.name) else { return report }
        var format = PropertyListSerialization.PropertyListFormat.xml
        var isJSON = true
        var dictionary: [String: Any]
        if let json = try? JSONSerialization.jsonObject(with: file.contents) as? [String: Any] {
            dictionary = json
        } else if let plist = try? PropertyListSerialization.propertyList(from: file.contents, format: &format)
            as? [String: Any]
        {
            dictionary = plist
            isJSON = false
        } else {
            throw SecureStoreError(
                .decodingFailed,
                message: "The file '\(fileURL.lastPathComponent)' is not a JSON or property-list dictionary; nothing was migrated.",
                namespace: namespace.name)
        }

        // Foundation's parsers take keys that differ only in Unicode form for one: refuse
        // such a file whole rather than store one name's value under the other and rewrite
        // the file without the other.
        let twins = PlaintextKeyNames.twins(in: file.contents, parsed: dictionary, isJSON: isJSON)
        if !twins.isEmpty {
            throw SecureStoreError(
                .decodingFailed,
                message: "'\(fileURL.lastPathComponent)' has keys that differ only in Unicode form or may have such a twin "
                    + "(\(twins.joined(separator: ", "))): its parser would read them as one key with one value, so "
                    + "nothing was migrated and the file is unchanged.",
                namespace: namespace.name,
                fix: "Give each such key one spelling in the file (or move those values with SecureStore.set yourself), "
                    + "then run the migration again.")
        }

        var removed: [String] = []
        var failure: SecureStoreError?
        for key in keys ?? dictionary.keys.sorted() {
            let outcome: PlaintextOutcome
            do {
                outcome = try migrateOne(key: key, namespace: namespace, plaintext: dictionary[key])
            } catch {
                failure = error
                break
            }
            switch outcome {
            case .migrated: report.migrated.append(key)
            case .alreadyPresent: report.alreadyPresent.append(key)
            case .conflict:
                report.conflicts.append(key)
                continue
            case .absent: continue
            case .skipped(let reason):
                report.skipped[key] = reason
                continue
            }
            dictionary.removeValue(forKey: key)
            removed.append(key)
        }
        // Whatever happened, remove what is safely in the keychain from the file; a rewrite
        // that fails is reported, never ignored.
        if !removed.isEmpty {
            do {
                let data =
                    dictionary.isEmpty
                    ? nil
                    : isJSON
                        ? try JSONSerialization.data(withJSONObject: dictionary, options: [.sortedKeys])
                        : try PropertyListSerialization.data(fromPropertyList: dictionary, format: format, options: 0)
                try file.replace(with: data)
            } catch {
                throw SecureStoreError(
                    .unknown,
                    message: "\(removed.joined(separator: ", ")) \(removed.count == 1 ? "is" : "are") in the keychain, but "
                        + "'\(fileURL.lastPathComponent)' could not be rewritten (\(PlaintextFile.reason(error))), so the "
                        + "plaintext \(removed.count == 1 ? "copy is" : "copies are") still in it.",
                    namespace: namespace.name,
                    fix: "Run the migration again (after fixing the cause, if the reason names one): the keychain copies "
                        + "are found and the plaintext removed.")
            }
        }
        if let failure { throw failure }
        return report
    }

    private enum PlaintextOutcome {
        case migrated, alreadyPresent, conflict, absent
        case skipped(String)
    }

    /// Migrates one plaintext value: keychain write, verify; the caller removes the plaintext.
    private func migrateOne(key: String, namespace: Namespace, plaintext: Any?) throws(SecureStoreError) -> PlaintextOutcome {
        var outcome = PlaintextOutcome.absent
        try logged(.migratePlaintext, key: key, namespace: namespace) { () throws(SecureStoreError) in
            let service = service(for: namespace)
            if try keychain(key: key, namespace: namespace, { () throws(KeychainError) in
                try provider.containsItem(key: key, service: service)
            }) {
                guard let plaintext else {
                    outcome = .absent
                    return .skipped
                }
                // Only the same value lets the plaintext go; a different one is a conflict.
                let present = try keychain(key: key, namespace: namespace) { () throws(KeychainError) in
                    try provider.getItem(key: key, service: service, prompt: nil)
                }
                if let present, let text = SecureStore.storedText(for: plaintext),
                    SecureStore.sameStoredValue(present, Data(text.utf8))
                {
                    outcome = .alreadyPresent
                    return .success
                }
                outcome = .conflict
                return .skipped
            }
            guard let plaintext else { return .skipped }
            guard let text = SecureStore.storedText(for: plaintext) else {
                outcome = .skipped("the value (\(type(of: plaintext))) cannot be represented as JSON")
                return .skipped
            }
            switch ValueCoding.excess(of: text, sizeLimit: configuration.sizeLimit) {
            case .characters(let size):
                outcome = .skipped("the value is \(size) characters; the limit is \(configuration.sizeLimit)")
                return .skipped
            case .bytes(let bytes):
                outcome = .skipped(
                    "the value is \(bytes) bytes; the limit is \(configuration.sizeLimit) characters and "
                        + "\(ValueCoding.byteLimit(for: configuration.sizeLimit)) bytes")
                return .skipped
            case nil:
                break
            }
            let data = Data(text.utf8)
            try keychain(key: key, namespace: namespace) { () throws(KeychainError) in
                try provider.setItem(data, key: key, service: service, protection: .standard)
                guard try provider.getItem(key: key, service: service, prompt: nil) == data else {
                    throw KeychainError(
                        status: errSecDecode, operation: .copyMatching, service: service, key: key,
                        detail: "The migrated copy did not read back identical; the plaintext copy was kept.",
                            fix: "Run the migration again; if this persists, the destination cannot hold the value "
                                + "(check its access group and accessibility).")
                }
            }
            recordNamespace(namespace)
            outcome = .migrated
            return .success
        }
        return outcome
    }

    /// The text ``set(_:for:in:)`` would store for a property-list value, or `nil`.
    static func storedText(for value: Any) -> String? {
        if let string = value as? String { return string }
        if let data = value as? Data {
            return String(decoding: (try? JSONEncoder().encode(data)) ?? Data(), as: UTF8.self)
        }
        guard JSONSerialization.isValidJSONObject([value]),
            let json = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys])
        else { return nil }
        return String(decoding: json, as: UTF8.self)
    }

    /// Whether two stored values are the same: the same bytes, compared in constant time.
    ///
    /// Only the very same bytes let a migration delete the plaintext copy. Values that merely
    /// read alike as JSON are different values (`1.10` and `1.1` are two version strings,
    /// `1e2` and `100` two texts, and long numbers round to the same `Double`): they are a
    /// conflict, and both copies are kept. The plaintext a migration writes is deterministic
    /// (keys sorted), so an interrupted earlier run always left the same bytes.
    static func sameStoredValue(_ left: Data, _ right: Data) -> Bool {
        KeyInfo.constantTimeEqual(left, right)
    }
}
