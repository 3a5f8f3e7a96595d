import Foundation
import Keysmith

/// `org.freedesktop.Secret.Service` on `/org/freedesktop/secrets`.
extension SecretServiceServer {
    func serviceMethod(_ call: BusCall, _ member: String) throws(SecretServiceError) -> [DBusValue]? {
        switch member {
        case "OpenSession": return try openSession(call)
        case "CreateCollection": return try createCollection(call)
        case "SearchItems":
            let query = try ItemAttributes(dbus: arguments(call, "a{ss}")[0])
            var unlocked: [String] = []
            var locked: [String] = []
            for collection in collections {
                let paths = itemPaths(collection, try collection.search(query))
                if collection.isLocked { locked += paths } else { unlocked += paths }
            }
            return [.objectPaths(unlocked), .objectPaths(locked)]
        case "Unlock": return try unlock(call)
        case "Lock":
            let objects = try arguments(call, "ao")[0]
            var lockedPaths: [String] = []
            for path in Self.paths(objects) {
                let collection = try collectionOf(path)
                try collection.lock()
                lockedPaths.append(path)
            }
            announceLockChanges()
            return [.objectPaths(lockedPaths), .objectPath(ObjectPath.none)]
        case "GetSecrets":
            let values = try arguments(call, "aoo")
            let session = try session(values[1].text ?? "", caller: call.sender)
            var entries: [(DBusValue, DBusValue)] = []
            // Each path once: the answer is a dictionary, and a client naming one item thousands
            // of times must not keep the service reading (and the audit log filling) for everyone.
            var seen = Set<[UInt8]>()
            for path in Self.paths(values[0]) where seen.insert(Array(path.utf8)).inserted {
                guard let (collection, item) = try? resolveItem(path), !collection.isLocked else { continue }
                // An item that cannot be read now (its access control asks for the user, the
                // keychain locked since the check, another program deleted it) is left out, as
                // a locked collection's are; the others are still returned.
                var secret: StoredSecret
                do {
                    secret = try collection.secret(of: item.identifier)
                } catch where error.name == SecretServiceError.isLocked("").name || error.name == SecretServiceError.noSuchObject("").name {
                    continue
                }
                defer { secret.bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { memset(base, 0, $0.count) } } }
                entries.append((.objectPath(path), try secretValue(secret, session)))
                readLog?.record(call: call, collection: collection, item: item)
            }
            return [.dictionary(keySignature: "o", valueSignature: "(oayays)", entries)]
        case "ReadAlias":
            let name = try arguments(call, "s")[0].text ?? ""
            guard let target = aliasTarget(name), collection(target) != nil else { return [.objectPath(ObjectPath.none)] }
            return [.objectPath(ObjectPath.collectionPath(target))]
        case "SetAlias":
            let values = try arguments(call, "so")
            let name = values[0].text ?? ""
            let path = values[1].text ?? ""
            guard !name.isEmpty, name.utf8.allSatisfy({ Self.isPathCharacter($0) }) else {
                throw .invalidArguments("an alias is made of letters, digits and underscores.")
            }
            aliases.removeAll { ObjectPath.same($0.alias, name) }
            if !ObjectPath.same(path, ObjectPath.none) {
                guard case .collection(let part, let target) = ObjectPath(path), let collection = collection(part: part, name: target) else {
                    throw .noSuchObject("there is no collection at \(path).")
                }
                aliases.append((name, collection.identifier))
            }
            return []
        default:
            throw unknownMethod(call)
        }
    }

    private func openSession(_ call: BusCall) throws(SecretServiceError) -> [DBusValue] {
        let values = try arguments(call, "sv")
        let input: SessionInput
        switch values[1].unwrapped {
        case .string(let text): input = .string(text)
        case .bytes(let bytes): input = .bytes(bytes)
        case let other: input = .other(signature: other.signature)
        }
        let (cipher, output) = try SessionAlgorithm.negotiate(algorithm: values[0].text ?? "", input: input)
        let number = nextNumber
        nextNumber += 1
        let owned = sessions.values.filter { ObjectPath.same($0.owner, call.sender) }.map(\.number)
        if owned.count >= Self.maximumSessionsPerClient, let oldest = owned.min() { sessions[oldest] = nil }
        sessions[number] = ClientSession(number: number, owner: call.sender, cipher: cipher)
        let outputValue: DBusValue
        switch output {
        case .empty: outputValue = .string("")
        case .publicKey(let key): outputValue = .bytes(key)
        }
        return [.variant(outputValue), .objectPath(ObjectPath.sessionPath(number))]
    }

    private func createCollection(_ call: BusCall) throws(SecretServiceError) -> [DBusValue] {
        let values = try arguments(call, "a{sv}s")
        let alias = values[1].text ?? ""
        if !alias.isEmpty, let target = aliasTarget(alias), collection(target) != nil {
            return [.objectPath(ObjectPath.collectionPath(target)), .objectPath(ObjectPath.none)]
        }
        var label = ""
        if case .dictionary(_, _, let entries) = values[0] {
            for (key, value) in entries where ObjectPath.same(key.text ?? "", "org.freedesktop.Secret.Collection.Label") {
                guard case .string(let text) = value.unwrapped else { throw .invalidArguments("a collection's label is a string.") }
                label = text
            }
        }
        guard label.utf8.count <= maximumLabelBytes else { throw .invalidArguments("a label has at most \(maximumLabelBytes) bytes.") }
        if !alias.isEmpty, !alias.utf8.allSatisfy({ Self.isPathCharacter($0) }) {
            throw .invalidArguments("an alias is made of letters, digits and underscores.")
        }
        let collection = try KeychainCollectionDirectory.create(label: label, taken: collections.map(\.identifier))
        collections.append(collection)
        KeychainCollectionDirectory.grantAccess(collections)
        announcedLocks.append((collection.identifier, collection.isLocked))
        if !alias.isEmpty {
            aliases.removeAll { ObjectPath.same($0.alias, alias) }
            aliases.append((alias, collection.identifier))
        }
        let path = ObjectPath.collectionPath(collection.identifier)
        emit(ObjectPath.servicePath, "org.freedesktop.Secret.Service", "CollectionCreated", [.objectPath(path)])
        propertiesChanged(ObjectPath.servicePath, "org.freedesktop.Secret.Service", [("Collections", collectionsValue)])
        return [.objectPath(path), .objectPath(ObjectPath.none)]
    }

    private func unlock(_ call: BusCall) throws(SecretServiceError) -> [DBusValue] {
        let objects = Self.paths(try arguments(call, "ao")[0])
        var unlocked: [String] = []
        var waiting: [String] = []
        for path in objects {
            let collection = try collectionOf(path)
            if !collection.isLocked {
                unlocked.append(path)
            } else if let memory = collection as? MemoryCollection {
                memory.unlock()
                unlocked.append(path)
            } else {
                waiting.append(path)
            }
        }
        announceLockChanges()
        guard !waiting.isEmpty else { return [.objectPaths(unlocked), .objectPath(ObjectPath.none)] }
        let number = nextNumber
        nextNumber += 1
        let owned = prompts.filter { ObjectPath.same($0.value.owner, call.sender) }.map(\.key)
        if owned.count >= Self.maximumPromptsPerClient, let oldest = owned.min() {
            finishPrompt(oldest, .dismissed("a client left more than \(Self.maximumPromptsPerClient) unlock prompts waiting; its oldest was dismissed."))
        }
        prompts[number] = PendingPrompt(owner: call.sender, objects: waiting, running: false)
        return [.objectPaths(unlocked), .objectPath(ObjectPath.promptPath(number))]
    }

    /// The collection of a collection or item path.
    func collectionOf(_ path: String) throws(SecretServiceError) -> any SecretCollection {
        switch ObjectPath(path) {
        case .collection(let part, let name):
            guard let collection = collection(part: part, name: name) else { throw .noSuchObject("there is no collection at \(path).") }
            return collection
        case .item:
            return try resolveItem(path).0
        default:
            throw .noSuchObject("there is no collection or item at \(path).")
        }
    }

    /// A stored secret as the `(oayays)` struct for a session.
    func secretValue(_ secret: StoredSecret, _ session: ClientSession) throws(SecretServiceError) -> DBusValue {
        let (parameters, value) = try session.cipher.seal(secret.bytes)
        return .structure([.objectPath(ObjectPath.sessionPath(session.number)), .bytes(parameters), .bytes(value), .string(secret.contentType)])
    }

    /// A `(oayays)` secret a client sent, opened in its session.
    func storedSecret(_ value: DBusValue, caller: String) throws(SecretServiceError) -> StoredSecret {
        guard case .structure(let fields) = value, fields.count == 4, let sessionPath = fields[0].text,
            case .bytes(let parameters) = fields[1], case .bytes(let sealed) = fields[2], let contentType = fields[3].text
        else { throw .invalidArguments("a secret is a (oayays) struct: session, parameters, value, content type.") }
        let session = try session(sessionPath, caller: caller)
        guard contentType.utf8.count <= maximumLabelBytes else { throw .invalidArguments("the content type is too long.") }
        return StoredSecret(bytes: try session.cipher.open(parameters: parameters, value: sealed), contentType: contentType.isEmpty ? "text/plain" : contentType)
    }

    var collectionsValue: DBusValue {
        .objectPaths(collections.map { ObjectPath.collectionPath($0.identifier) })
    }

    static func paths(_ value: DBusValue) -> [String] {
        guard case .array(_, let elements) = value else { return [] }
        return elements.compactMap(\.text)
    }

    static func isPathCharacter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
    }
}
