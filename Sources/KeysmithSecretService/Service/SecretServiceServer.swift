import Foundation
import Keysmith
import KeychainServices
import Synchronization

/// The Secret Service (freedesktop Secret Service API 0.2) over the keychain, on one bus
/// connection: the objects, their methods, properties and signals. Runs on one thread
/// (sd-bus is not thread-safe); only the unlock prompt's program runs on another, and hands
/// its result back through ``PromptResults``.
public final class SecretServiceServer: BusMessageHandler {
    let connection: BusConnection
    var collections: [any SecretCollection] = []
    /// Alias name and the collection identifier it points to.
    var aliases: [(alias: String, collection: String)] = []
    var sessions: [Int: ClientSession] = [:]
    var prompts: [Int: PendingPrompt] = [:]
    /// At most this many sessions per client: opening one more ends the client's oldest (a
    /// client that opens a session per lookup and never closes one cannot fill the memory).
    static let maximumSessionsPerClient = 1024
    /// At most this many unlock prompts waiting per client: one more dismisses its oldest.
    static let maximumPromptsPerClient = 64
    var nextNumber = 1
    /// The last lock state announced per collection identifier.
    var announcedLocks: [(collection: String, locked: Bool)] = []
    let promptResults = PromptResults()
    /// Whether the askpass program runs now (one at a time, whoever asks).
    var askpassRunning = false
    /// Prompts answered while it runs: they complete with its outcome.
    var promptsJoiningAskpass: [Int] = []
    let readLog: BusClientReadLog?
    /// Set when the service should stop (a signal, the name lost).
    private(set) var stopReason: String?

    /// The well-known name.
    public static let busName = "org.freedesktop.secrets"

    init(connection: BusConnection, readLog: BusClientReadLog?) {
        self.connection = connection
        self.readLog = readLog
        KeychainEnvironment.accessGroups = [KeychainEnvironment.sharedAccessGroup, KeychainCollection.serviceMetadataGroup, "*"]
        let login = KeychainCollection(
            identifier: "login", accessGroup: KeychainEnvironment.sharedAccessGroup,
            label: KeychainCollection.storedLoginLabel() ?? "Login", created: 0, metadataAccount: nil)
        collections = [login, MemoryCollection(identifier: "session", label: "Session")]
        KeychainCollectionDirectory.grantAccess(collections)
        collections += KeychainCollectionDirectory.created()
        KeychainCollectionDirectory.grantAccess(collections)
        aliases = [("default", "login"), ("login", "login"), ("session", "session")]
        announcedLocks = collections.map { ($0.identifier, $0.isLocked) }
    }

    // MARK: Lookups

    func collection(_ identifier: String) -> (any SecretCollection)? {
        collections.first { ObjectPath.same($0.identifier, identifier) }
    }

    func aliasTarget(_ alias: String) -> String? {
        aliases.first { ObjectPath.same($0.alias, alias) }?.collection
    }

    /// The collection a path's collection part names (`collection/ID` or `aliases/NAME`).
    func collection(part: String, name: String) -> (any SecretCollection)? {
        if ObjectPath.same(part, "aliases") {
            return aliasTarget(name).flatMap(collection)
        }
        return collection(name)
    }

    /// The collection and item of an item path, or an error.
    func resolveItem(_ path: String) throws(SecretServiceError) -> (any SecretCollection, ItemSummary) {
        guard case .item(let part, let name, let item) = ObjectPath(path), let collection = collection(part: part, name: name),
            let summary = try collection.item(item)
        else { throw .noSuchObject("there is no item at \(path).") }
        return (collection, summary)
    }

    func itemPaths(_ collection: any SecretCollection, _ items: [ItemSummary]) -> [String] {
        items.map { ObjectPath.itemPath(collection.identifier, $0.identifier) }
    }

    /// The session of a secret the caller sent or asks for, checked to be the caller's.
    func session(_ path: String, caller: String) throws(SecretServiceError) -> ClientSession {
        guard case .session(let number) = ObjectPath(path), let session = sessions[number] else {
            throw .noSession("there is no session at \(path): open one with OpenSession.")
        }
        guard ObjectPath.same(session.owner, caller) else {
            throw .noSession("the session at \(path) belongs to another client; open your own with OpenSession.")
        }
        return session
    }

    // MARK: Dispatch

    func handleMethodCall(_ call: BusCall) -> Bool {
        let path = call.path
        let object = ObjectPath(path)
        do {
            let values = try dispatch(call, object)
            if let values { call.reply(values) }
        } catch {
            call.fail(error)
        }
        return true
    }

    /// Answers a call; `nil` when the answer was already sent.
    private func dispatch(_ call: BusCall, _ object: ObjectPath) throws(SecretServiceError) -> [DBusValue]? {
        let interface = call.interface
        let member = call.member
        if ObjectPath.same(interface, "org.freedesktop.DBus.Introspectable") || (interface.isEmpty && ObjectPath.same(member, "Introspect")) {
            try expect(call, "")
            return [.string(try introspect(object))]
        }
        switch object {
        case .unknown:
            throw SecretServiceError(name: "org.freedesktop.DBus.Error.UnknownObject", message: "there is no object at \(call.path).")
        case .node:
            throw SecretServiceError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "\(call.path) only introspects.")
        default:
            break
        }
        try checkExists(object, call.path)
        if ObjectPath.same(interface, "org.freedesktop.DBus.Properties") {
            return try properties(call, object)
        }
        switch object {
        case .service: return try serviceMethod(call, member)
        case .collection(let part, let name):
            return try collectionMethod(call, member, collection(part: part, name: name)!)
        case .item: return try itemMethod(call, member)
        case .session(let number):
            guard ObjectPath.same(member, "Close") else { throw unknownMethod(call) }
            try expect(call, "")
            guard let session = sessions[number], ObjectPath.same(session.owner, call.sender) else {
                throw .accessDenied("the session at \(call.path) belongs to another client; a client closes only its own sessions.")
            }
            sessions[number] = nil
            return []
        case .prompt(let number): return try promptMethod(call, member, number)
        default: throw unknownMethod(call)
        }
    }

    /// Throws `NoSuchObject` when the object a path names does not exist.
    func checkExists(_ object: ObjectPath, _ path: String) throws(SecretServiceError) {
        switch object {
        case .collection(let part, let name):
            guard collection(part: part, name: name) != nil else { throw .noSuchObject("there is no collection at \(path).") }
        case .item:
            _ = try resolveItem(path)
        case .session(let number):
            guard sessions[number] != nil else { throw .noSuchObject("there is no session at \(path).") }
        case .prompt(let number):
            guard prompts[number] != nil else { throw .noSuchObject("there is no prompt at \(path).") }
        default: break
        }
    }

    func unknownMethod(_ call: BusCall) -> SecretServiceError {
        SecretServiceError(
            name: "org.freedesktop.DBus.Error.UnknownMethod",
            message: "\(call.path) has no method \(call.member) (interface \(call.interface.isEmpty ? "any" : call.interface)).")
    }

    /// Throws `InvalidArgs` unless the call's arguments have this signature.
    func expect(_ call: BusCall, _ signature: String) throws(SecretServiceError) {
        let actual = call.signature
        guard ObjectPath.same(actual, signature) else {
            throw .invalidArguments("\(call.member) takes arguments of type '\(signature)', not '\(actual)'.")
        }
    }

    /// The call's arguments, checked against `signature`.
    func arguments(_ call: BusCall, _ signature: String) throws(SecretServiceError) -> [DBusValue] {
        try expect(call, signature)
        guard let values = call.arguments() else { throw .invalidArguments("the arguments of \(call.member) could not be read.") }
        return values
    }

    // MARK: Signals

    func emit(_ path: String, _ interface: String, _ member: String, _ values: [DBusValue]) {
        connection.emit(path: path, interface: interface, member: member, values)
    }

    func propertiesChanged(_ path: String, _ interface: String, _ changed: [(String, DBusValue)]) {
        emit(path, "org.freedesktop.DBus.Properties", "PropertiesChanged", [
            .string(interface), .properties(changed.map { ($0.0, $0.1) }), .array(elementSignature: "s", []),
        ])
    }

    func itemsChanged(_ collection: any SecretCollection) {
        let items = (try? collection.items()) ?? []
        propertiesChanged(ObjectPath.collectionPath(collection.identifier), "org.freedesktop.Secret.Collection", [
            ("Items", .objectPaths(itemPaths(collection, items)))
        ])
    }

    /// Announces lock-state changes made anywhere (`keysmith lock`, the auto-lock timeout,
    /// another process's unlock): `PropertiesChanged` of `Locked` and `CollectionChanged`.
    func announceLockChanges() {
        for collection in collections {
            let locked = collection.isLocked
            if let index = announcedLocks.firstIndex(where: { ObjectPath.same($0.collection, collection.identifier) }) {
                guard announcedLocks[index].locked != locked else { continue }
                announcedLocks[index].locked = locked
            } else {
                announcedLocks.append((collection.identifier, locked))
            }
            let path = ObjectPath.collectionPath(collection.identifier)
            propertiesChanged(path, "org.freedesktop.Secret.Collection", [("Locked", .boolean(locked))])
            emit(ObjectPath.servicePath, "org.freedesktop.Secret.Service", "CollectionChanged", [.objectPath(path)])
            if !locked { _ = try? collection.items() }  // learn the items, for searches while locked
        }
    }

    // MARK: Bus events

    func nameOwnerChanged(name: String, oldOwner: String, newOwner: String) {
        guard newOwner.isEmpty, name.utf8.first == UInt8(ascii: ":") else { return }
        readLog?.forget(name)
        // The client left the bus: its sessions end, its prompts go away.
        for (number, session) in sessions where ObjectPath.same(session.owner, name) { sessions[number] = nil }
        for (number, prompt) in prompts where ObjectPath.same(prompt.owner, name) { prompts[number] = nil }
    }

    func nameLost(_ name: String) {
        if ObjectPath.same(name, Self.busName) { stopReason = "another program took over \(Self.busName)" }
    }

    /// Runs until `shouldStop` says so, the name is lost, or the bus goes away.
    /// - Returns: Why it stopped.
    func run(shouldStop: () -> Bool) -> (reason: String, failed: Bool) {
        var lastLockCheck = Date()
        while true {
            if shouldStop() { return ("stopped by a signal", false) }
            if let stopReason { return (stopReason, false) }
            do {
                try connection.processAndWait(timeout: 0.25)
            } catch {
                return ("the bus went away (\(error))", false)
            }
            for (number, outcome) in promptResults.take() { finishAskpass(number, outcome) }
            if Date().timeIntervalSince(lastLockCheck) >= 1 {
                lastLockCheck = Date()
                announceLockChanges()
            }
        }
    }
}
