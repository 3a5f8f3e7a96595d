import Foundation
import KeychainServices

// The async variants of KeychainStore's calls. Keychain calls block (a few milliseconds,
// longer when the keychain is busy or a prompt is shown), so these run the call on the
// global concurrent executor (`@concurrent`), off the caller's actor: call them from the
// main actor without stalling the UI. They stay in the caller's task, so task-local
// values reach the keychain call.

extension KeychainStore {
    /// Stores `data` under `key` off the caller's actor; see ``set(_:for:label:comment:)-(Data,_,_,_)``.
    /// - Parameters:
    ///   - data: The bytes to store.
    ///   - key: The key; must not be empty.
    ///   - label: A user-visible label, or `nil`.
    ///   - comment: A comment, or `nil`.
    /// - Throws: ``KeychainError``.
    /// - Note: On failure the previous value, if any, is left in place.
    @concurrent
    public func set(_ data: Data, for key: String, label: String? = nil, comment: String? = nil) async throws(KeychainError) {
        try write(data, for: key, label: label, comment: comment)
    }

    /// Stores a UTF-8 string under `key` off the caller's actor.
    /// - Parameters:
    ///   - string: The string to store.
    ///   - key: The key; must not be empty.
    ///   - label: A user-visible label, or `nil`.
    ///   - comment: A comment, or `nil`.
    /// - Throws: ``KeychainError``.
    /// - Note: On failure the previous value, if any, is left in place.
    @concurrent
    public func set(_ string: String, for key: String, label: String? = nil, comment: String? = nil) async throws(KeychainError) {
        try write(Data(string.utf8), for: key, label: label, comment: comment)
    }

    /// Stores any `Encodable` value under `key` off the caller's actor; see
    /// ``set(_:for:label:comment:)-(Value,_,_,_)`` (`String` and `Data` as their own
    /// overloads store them, anything else as JSON).
    /// - Parameters:
    ///   - value: The value to store; `nil` is refused.
    ///   - key: The key; must not be empty.
    ///   - label: A user-visible label, or `nil`.
    ///   - comment: A comment, or `nil`.
    /// - Throws: ``KeychainError``.
    /// - Note: On failure the previous value, if any, is left in place.
    @concurrent
    public func set<Value: Encodable & Sendable>(
        _ value: Value, for key: String, label: String? = nil, comment: String? = nil
    ) async throws(KeychainError) {
        try write(try storedBytes(of: value, key: key), for: key, label: label, comment: comment)
    }

    /// Stores an `Encodable` value, as JSON, under `key` off the caller's actor (the older
    /// spelling; `String` and `Data` are stored as JSON too).
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key; must not be empty.
    ///   - label: A user-visible label, or `nil`.
    ///   - comment: A comment, or `nil`.
    /// - Throws: ``KeychainError``.
    /// - Note: On failure the previous value, if any, is left in place.
    @available(*, deprecated, renamed: "set(_:for:label:comment:)")
    @concurrent
    public func setValue<Value: Encodable & Sendable>(
        _ value: Value, for key: String, label: String? = nil, comment: String? = nil
    ) async throws(KeychainError) {
        try write(try encode(value, key: key), for: key, label: label, comment: comment)
    }

    /// The data under `key`, read off the caller's actor.
    /// - Parameters:
    ///   - key: The key.
    ///   - prompt: The reason shown if authentication is needed, or `nil`.
    /// - Returns: The data, or `nil` when there is no such item.
    /// - Throws: ``KeychainError``.
    @concurrent
    public func data(for key: String, prompt: String? = nil) async throws(KeychainError) -> Data? {
        try read(key, prompt: prompt)
    }

    /// The UTF-8 string under `key`, read off the caller's actor.
    /// - Parameters:
    ///   - key: The key.
    ///   - prompt: The reason shown if authentication is needed, or `nil`.
    /// - Returns: The string, or `nil` when there is no such item.
    /// - Throws: ``KeychainError`` (``KeychainError/Code/dataCorrupted`` when not UTF-8).
    @concurrent
    public func string(for key: String, prompt: String? = nil) async throws(KeychainError) -> String? {
        guard let data = try read(key, prompt: prompt) else { return nil }
        return try decode(String.self, from: data, key: key)
    }

    /// The `Decodable` value under `key`, read off the caller's actor.
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - key: The key.
    ///   - prompt: The reason shown if authentication is needed, or `nil`.
    /// - Returns: The value, or `nil` when there is no such item.
    /// - Throws: ``KeychainError`` (``KeychainError/Code/dataCorrupted`` when not the JSON of `type`).
    @concurrent
    public func value<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self, for key: String, prompt: String? = nil
    ) async throws(KeychainError) -> Value? {
        guard let data = try read(key, prompt: prompt) else { return nil }
        return try decode(type, from: data, key: key)
    }

    /// Whether an item exists under `key`, checked off the caller's actor.
    /// - Parameter key: The key.
    /// - Returns: `true` when the item exists.
    /// - Throws: ``KeychainError``.
    @concurrent
    public func contains(_ key: String) async throws(KeychainError) -> Bool {
        try syncContains(key)
    }

    /// The metadata of the item under `key`, read off the caller's actor.
    /// - Parameter key: The key.
    /// - Returns: The attributes, or `nil` when there is no such item.
    /// - Throws: ``KeychainError``.
    @concurrent
    public func attributes(for key: String) async throws(KeychainError) -> KeychainItemAttributes? {
        try syncAttributes(for: key)
    }

    /// The keys of all this store's items, read off the caller's actor.
    /// - Returns: The sorted keys.
    /// - Throws: ``KeychainError``.
    @concurrent
    public func allKeys() async throws(KeychainError) -> [String] {
        try syncAllAttributes().map(\.key).sorted()
    }

    /// Removes the item under `key` off the caller's actor; a missing item is success.
    /// - Parameter key: The key.
    /// - Throws: ``KeychainError``.
    @concurrent
    public func remove(_ key: String) async throws(KeychainError) {
        try syncRemove(key)
    }

    /// Removes every item of this store off the caller's actor; see ``removeAll()-(_)``.
    /// - Throws: ``KeychainError``.
    @concurrent
    public func removeAll() async throws(KeychainError) {
        try syncRemoveAll()
    }

    // Non-overloaded names of the synchronous calls, so that the async variants above do
    // not resolve to themselves.
    func syncContains(_ key: String) throws(KeychainError) -> Bool { try contains(key) }
    func syncAttributes(for key: String) throws(KeychainError) -> KeychainItemAttributes? { try attributes(for: key) }
    func syncAllAttributes() throws(KeychainError) -> [KeychainItemAttributes] { try allAttributes() }
    func syncRemove(_ key: String) throws(KeychainError) { try remove(key) }
    func syncRemoveAll() throws(KeychainError) { try removeAll() }
}
