import Foundation
import KeychainServices

/// `docker-credential-keysmith`: Docker's credential-helper protocol over the keychain.
///
/// - `store`: `{"ServerURL": …, "Username": …, "Secret": …}` on standard input.
/// - `get`: a server URL on standard input; prints `{"ServerURL", "Username", "Secret"}`.
/// - `erase`: a server URL on standard input.
/// - `list`: prints `{"URL": "username", …}` for every Docker credential.
/// - `version`: prints the helper's name and version.
///
/// Items are internet passwords shaped as docker-credential-osxkeychain's: label
/// `Docker Credentials`, server, protocol (`htps`, or `http` for an `http://` URL), port,
/// path, account, authentication type `dflt`, the secret as data. A server URL without a
/// port means port 0 (not "any port").
///
/// - Note: As Docker expects, every message (including the exact
///   `credentials not found in native keychain` for a missing entry) goes to standard
///   output, with exit status 1.
public enum DockerCredentialHelper {
    /// The label docker-credential-helpers gives its items.
    public static let label = "Docker Credentials"
    /// The message Docker recognizes for a missing entry.
    public static let notFoundMessage = "credentials not found in native keychain"
    /// The version `version` prints.
    public static let version = "0.1.0"
    /// The usage line.
    public static let usage = "Usage: docker-credential-keysmith <store|get|erase|list|version>"

    /// Runs one helper action.
    /// - Parameters:
    ///   - arguments: The command-line arguments after the program name.
    ///   - input: What Docker wrote on standard input.
    /// - Returns: The output for Docker (messages included) and the exit status.
    public static func run(arguments: [String], input: Data) -> HelperResult {
        guard arguments.count == 1 else { return message(usage, status: 1) }
        switch arguments[0] {
        case "--version", "-v", "version": return message(versionLine, status: 0)
        case "--help", "-h": return message(usage, status: 0)
        default: break
        }
        do throws(HelperFailure) {
            switch arguments[0] {
            case "store": try store(input)
            case "get": return HelperResult(standardOutput: try get(input))
            case "erase": try erase(input)
            case "list": return HelperResult(standardOutput: try list())
            default: throw HelperFailure("docker-credential-keysmith: unknown action: \(arguments[0])")
            }
            return HelperResult()
        } catch {
            return message(error.message, status: 1)
        }
    }

    /// `docker-credential-keysmith (keysmith) 0.1.0`.
    static var versionLine: String { "docker-credential-keysmith (keysmith) \(version)" }

    private static func message(_ text: String, status: Int32) -> HelperResult {
        HelperResult(standardOutput: Data((text + "\n").utf8), status: status)
    }

    // MARK: Actions

    static func store(_ input: Data) throws(HelperFailure) {
        guard let object = try? JSONSerialization.jsonObject(with: input) as? [String: Any] else {
            throw HelperFailure("keysmith: store expects a JSON object with ServerURL, Username and Secret on standard input.")
        }
        // A field that is there must be a string, as Docker's own helpers decode it: a secret
        // given as a number or null is refused, never stored as an empty secret over the
        // credential that was there. (A field that is missing is empty, as there.)
        for field in ["ServerURL", "Username", "Secret"] {
            if let value = object[field], !(value is String) {
                throw HelperFailure("keysmith: store expects \(field) to be a JSON string (nothing was stored).")
            }
        }
        let serverURL = (object["ServerURL"] as? String) ?? ""
        let username = (object["Username"] as? String) ?? ""
        guard !serverURL.isEmpty else { throw HelperFailure("no credentials server URL") }
        guard !username.isEmpty else { throw HelperFailure("no credentials username") }
        let address = try RegistryAddress(serverURL)
        var secret = Data(((object["Secret"] as? String) ?? "").utf8)
        defer { secret.resetBytes(in: 0..<secret.count) }

        // One credential per address: replace the one there (whatever its user name) in a
        // single update, or add one. Never delete first: a failed add would lose it.
        let existing = try InternetPasswordKeychain.items(
            matching: labelled(address.query), data: false, action: "store the credential")
        if let current = existing.first {
            var exact = current.filter { InternetPasswordKeychain.primaryKeyTags.contains($0.key) }
            exact[kSecClass as String] = kSecClassInternetPassword as String
            let changes: [String: Any] = [kSecAttrAccount as String: username, kSecValueData as String: secret]
            let status = SecItemUpdate(exact as CFDictionary, changes as CFDictionary)
            if status != errSecDuplicateItem {
                guard status == errSecSuccess else { throw HelperFailure.keychain("store the credential", status) }
                for stale in existing.dropFirst() {
                    try InternetPasswordKeychain.delete(exactly: stale, action: "store the credential")
                }
                return
            }
            // Another item already has this user name at this address: update that one below.
        }
        var attributes = address.query
        attributes[kSecAttrAccount as String] = username
        attributes[kSecAttrAuthenticationType as String] = kSecAttrAuthenticationTypeDefault as String
        attributes[kSecAttrLabel as String] = label
        attributes[kSecValueData as String] = secret
        var collision = address.query
        collision[kSecAttrAccount as String] = username
        collision[kSecAttrAuthenticationType as String] = kSecAttrAuthenticationTypeDefault as String
        try InternetPasswordKeychain.addOrUpdate(
            attributes, existing: collision,
            changes: [kSecValueData as String: secret, kSecAttrLabel as String: label], action: "store the credential")
        for stale in existing where InternetPasswordKeychain.string(stale, kSecAttrAccount) != username {
            try InternetPasswordKeychain.delete(exactly: stale, action: "store the credential")
        }
    }

    static func get(_ input: Data) throws(HelperFailure) -> Data {
        let serverURL = try readServerURL(input)
        let address = try RegistryAddress(serverURL)
        let items = try InternetPasswordKeychain.items(
            matching: labelled(address.query), data: true, action: "read the credential")
        guard let item = items.first else { throw HelperFailure(notFoundMessage) }
        var secret = InternetPasswordKeychain.data(item)
        defer { secret.resetBytes(in: 0..<secret.count) }
        let object: [String: Any] = [
            "ServerURL": serverURL,
            "Username": InternetPasswordKeychain.string(item, kSecAttrAccount) ?? "",
            "Secret": String(decoding: secret, as: UTF8.self),
        ]
        return try json(object)
    }

    static func erase(_ input: Data) throws(HelperFailure) {
        let address = try RegistryAddress(try readServerURL(input))
        let items = try InternetPasswordKeychain.items(
            matching: labelled(address.query), data: false, action: "erase the credential")
        guard !items.isEmpty else { throw HelperFailure(notFoundMessage) }
        for item in items { try InternetPasswordKeychain.delete(exactly: item, action: "erase the credential") }
    }

    static func list() throws(HelperFailure) -> Data {
        let items = try InternetPasswordKeychain.items(
            matching: [kSecAttrLabel as String: label], data: false, action: "list the credentials")
        var map: [String: String] = [:]
        for item in items {
            map[RegistryAddress.url(of: item)] = InternetPasswordKeychain.string(item, kSecAttrAccount) ?? ""
        }
        return try json(map)
    }

    // MARK: Helpers

    /// `query` restricted to Docker's items (its label and authentication type).
    private static func labelled(_ query: [String: Any]) -> [String: Any] {
        var query = query
        query[kSecAttrLabel as String] = label
        query[kSecAttrAuthenticationType as String] = kSecAttrAuthenticationTypeDefault as String
        return query
    }

    /// The server URL on standard input, trimmed.
    private static func readServerURL(_ input: Data) throws(HelperFailure) -> String {
        // A server URL is UTF-8 text, compared byte for byte: other bytes are refused, never
        // repaired into U+FFFD (two different URLs would become one item).
        guard let decoded = String(validating: input, as: UTF8.self) else {
            throw HelperFailure("the credentials server URL is not UTF-8 text")
        }
        let text = decoded.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw HelperFailure("no credentials server URL") }
        return text
    }

    /// One line of JSON, keys sorted, as Go's encoder writes it.
    private static func json(_ object: Any) throws(HelperFailure) -> Data {
        guard var data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { throw HelperFailure("keysmith: could not encode the answer as JSON.") }
        data.append(UInt8(ascii: "\n"))
        return data
    }
}
