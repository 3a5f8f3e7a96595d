import Foundation
import KeychainServices

// Moving secrets out of plaintext preferences and files (seed 001, 4.5): values that an
// older version kept in UserDefaults or in a JSON/plist file are written to the keychain,
// verified, and only then removed from the plaintext store.

extension SecureStore {
    /// Moves values from `UserDefaults` into `namespace`, then removes them from the defaults.
    ///
    /// For each key: if the keychain already has it, the plaintext copy is removed (an
    /// earlier run was interrupted, or the app wrote a newer value); otherwise the value is
    /// written, read back and compared, and only then removed from the defaults. Idempotent
    /// and crash-safe: run it at every launch.
    ///
    /// Values are stored as ``set(_:_:in:)`` would store them: strings raw, `Data` as
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
            case .absent: continue
            case .skipped(let reason):
                report.skipped[key] = reason
                continue
            }
            defaults.removeObject(forKey: plainKey)
        }
        return report
    }

    /// Moves values from a JSON or property-list file (a top-level dictionary) into
    /// `namespace`, then removes them from the file: the file is deleted when nothing is
    /// left in it, otherwise rewritten (atomically, in its format) with the keys that were
    /// not migrated.
    ///
    /// Same rules as ``migratePlaintext(from:keys:in:rename:)``: keychain first, verified,
    /// then the plaintext copy; idempotent and crash-safe. A missing file is nothing to do.
    ///
    /// - Parameters:
    ///   - fileURL: The file, `.json` or `.plist` (the format is detected from the content).
    ///   - keys: The keys to move, or `nil` for every key of the file.
    ///   - namespace: The namespace the values move to (default ``Namespace/default``).
    /// - Returns: What happened to each key.
    /// - Throws: ``SecureStoreError``: ``SecureStoreError/Code/decodingFailed`` when the file
    ///   is not a JSON or property-list dictionary, ``SecureStoreError/Code/unknown`` when it
    ///   cannot be rewritten, or a keychain error; the file keeps every key not yet migrated.
    @discardableResult
    public func migratePlaintext(
        fromFile fileURL: URL, keys: [String]? = nil, in namespace: Namespace = .default
    ) throws(SecureStoreError) -> MigrationReport {
        var report = MigrationReport()
        guard let contents = try? Data(contentsOf: fileURL) else { return report }
        var format = PropertyListSerialization.PropertyListFormat.xml
        var isJSON = true
        var dictionary: [String: Any]
        if let json = try? JSONSerialization.jsonObject(with: contents) as? [String: Any] {
            dictionary = json
        } else if let plist = try? PropertyListSerialization.propertyList(from: contents, format: &format) as? [String: Any] {
            dictionary = plist
            isJSON = false
        } else {
            throw SecureStoreError(
                .decodingFailed,
                message: "The file '\(fileURL.lastPathComponent)' is not a JSON or property-list dictionary; nothing was migrated.",
                namespace: namespace.name)
        }

        var migratedAny = false
        defer {
            // Whatever happened, remove what is safely in the keychain from the file.
            if migratedAny { try? SecureStore.rewrite(dictionary, to: fileURL, isJSON: isJSON, format: format) }
        }
        for key in keys ?? dictionary.keys.sorted() {
            switch try migrateOne(key: key, namespace: namespace, plaintext: dictionary[key]) {
            case .migrated: report.migrated.append(key)
            case .alreadyPresent: report.alreadyPresent.append(key)
            case .absent: continue
            case .skipped(let reason):
                report.skipped[key] = reason
                continue
            }
            dictionary.removeValue(forKey: key)
            migratedAny = true
        }
        return report
    }

    private enum PlaintextOutcome {
        case migrated, alreadyPresent, absent
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
                outcome = plaintext == nil ? .absent : .alreadyPresent
                return plaintext == nil ? .skipped : .success
            }
            guard let plaintext else { return .skipped }
            guard let text = SecureStore.storedText(for: plaintext) else {
                outcome = .skipped("the value (\(type(of: plaintext))) cannot be represented as JSON")
                return .skipped
            }
            if text.count > configuration.sizeLimit {
                outcome = .skipped("the value is \(text.count) characters; the limit is \(configuration.sizeLimit)")
                return .skipped
            }
            let data = Data(text.utf8)
            try keychain(key: key, namespace: namespace) { () throws(KeychainError) in
                try provider.setItem(data, key: key, service: service, protection: .standard)
                guard try provider.getItem(key: key, service: service, prompt: nil) == data else {
                    throw KeychainError(
                        status: errSecDecode, operation: .copyMatching, service: service, key: key,
                        detail: "The migrated copy did not read back identical; the plaintext copy was kept.")
                }
            }
            recordNamespace(namespace)
            outcome = .migrated
            return .success
        }
        return outcome
    }

    /// The text ``set(_:_:in:)`` would store for a property-list value, or `nil`.
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

    /// Writes what is left of a plaintext file, or deletes the file when nothing is left.
    static func rewrite(
        _ dictionary: [String: Any], to url: URL, isJSON: Bool, format: PropertyListSerialization.PropertyListFormat
    ) throws {
        if dictionary.isEmpty {
            try FileManager.default.removeItem(at: url)
            return
        }
        let data =
            isJSON
            ? try JSONSerialization.data(withJSONObject: dictionary, options: [.sortedKeys])
            : try PropertyListSerialization.data(fromPropertyList: dictionary, format: format, options: 0)
        try data.write(to: url, options: .atomic)
    }
}
