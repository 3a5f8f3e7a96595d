// A canary secret goes through every API path (SecItem, KeychainStore, SecureStore,
// KeyRetriever with keychain, config-file and environment sources), successes and
// failures; every description, error, trace, audit, log event and diagnostic produced on
// the way is collected, and none may contain the canary in any encoding. Only values the
// caller explicitly asked for (returned data) may hold it.
import Foundation
import Keysmith
import Testing

struct ApiSecretCanaryTests {
    static let canary = "CANARY-7f3a9c1e-do-not-print"

    /// Every form the canary could leak in: text, base64, hex, and the byte list Swift
    /// prints for Data and arrays.
    static var forms: [String] {
        let bytes = Data(canary.utf8)
        return [
            canary, bytes.base64EncodedString(), bytes.map { String(format: "%02x", $0) }.joined(),
            bytes.map { String($0) }.joined(separator: ", "),
        ]
    }

    /// Whether `text` holds the canary in any of ``forms``, or as `dump` lists bytes (one
    /// decimal per line).
    static func leaks(_ text: String) -> Bool {
        if forms.contains(where: text.contains) { return true }
        let dumped = text.split(whereSeparator: \.isNewline).map { line -> UInt8? in
            let trimmed = line.drop { $0 == " " }
            return trimmed.hasPrefix("- ") ? UInt8(trimmed.dropFirst(2)) : nil
        }
        let wanted = Array(Data(canary.utf8))
        guard dumped.count >= wanted.count else { return false }
        return (0...(dumped.count - wanted.count)).contains { start in
            (0..<wanted.count).allSatisfy { dumped[start + $0] == wanted[$0] }
        }
    }

    @Test func leakCheckSeesEveryForm() {
        var dumped = ""
        dump(Array(Data(Self.canary.utf8)), to: &dumped)
        for text in Self.forms + [dumped] { #expect(Self.leaks("before " + text + " after"), "a form is not seen") }
        #expect(!Self.leaks("CANARY, but not the whole of it"))
    }

    final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var texts: [String] = []
        func add(_ text: String) { lock.lock(); texts.append(text); lock.unlock() }
        func add(_ value: Any) {
            add(String(describing: value))
            add(String(reflecting: value))
            var dumped = ""
            dump(value, to: &dumped)
            add(dumped)
        }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return texts }
    }

    @Test func canaryNeverAppearsOutsideWhatWasAskedFor() throws {
        let collected = Collected()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("canary-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = Data(Self.canary.utf8)

        try runInTemporaryKeychain(directory.appendingPathComponent("keychain")) {
            // SecItem: add, find (data, attributes, both), duplicate, bad update, delete.
            let item: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "canary",
                                       kSecAttrAccount as String: "a", kSecValueData as String: secret]
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
            let duplicate = SecItemAdd(item as CFDictionary, nil)
            collected.add(SecCopyErrorMessageString(duplicate, nil) as Any)
            var result: CFTypeRef?
            let lookup: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "canary",
                                         kSecReturnData as String: true, kSecReturnAttributes as String: true]
            #expect(SecItemCopyMatching(lookup as CFDictionary, &result) == errSecSuccess)
            let dictionary = try #require(result as? [String: Any], "the lookup returns one attribute dictionary")
            #expect(dictionary[kSecValueData as String] as? Data == secret)  // asked for
            var withoutData = dictionary
            withoutData[kSecValueData as String] = nil
            collected.add(withoutData)
            _ = SecItemUpdate(lookup as CFDictionary, [kSecValueData as String: "not data"] as CFDictionary)
            #if os(Linux)
            collected.add(KeychainDiagnostics.lastFailureDescription as Any)
            collected.add(KeychainDiagnostics.lastFailureRecovery as Any)
            #endif

            // KeychainStore: set, read, failures (injected and real), attributes.
            let faults = ErrorInjection()
            let store = try KeychainStore(service: "canary.store", errorInjection: faults)
            try store.set(secret, for: "token")
            #expect(try store.data(for: "token") == secret)
            collected.add(store)
            faults.failNext(with: errSecInteractionNotAllowed)
            do { _ = try store.data(for: "token") } catch { collected.add(error); collected.add(error.localizedDescription) }
            do { _ = try store.value(Int.self, for: "token") } catch { collected.add(error) }
            collected.add(try #require(try store.attributes(for: "token")))

            // SecureStore: set, get, limits, logger.
            let secure = try SecureStore(
                servicePrefix: "canary.secure", logger: SecureStoreLogger { collected.add($0) })
            try secure.set("token", Self.canary, in: "auth")
            #expect(try secure.get("token", as: String.self, in: "auth") == Self.canary)
            do { try secure.set("big", String(repeating: Self.canary, count: 200), in: "auth") } catch { collected.add(error) }
            do { _ = try secure.get("token", as: [Int].self, in: "auth") } catch { collected.add(error) }
            collected.add(secure)

            // KeyRetriever: keychain, config file and environment copies; trace, audit, logs.
            let keychainSource = KeychainKeySource(service: "canary.keys")
            try keychainSource.store(secret, for: "api_key", version: "2024.07.01")
            let configURL = directory.appendingPathComponent("Keys.json")
            try Data(#"{"api_key": {"value": "\#(secret.base64EncodedString())", "version": "2024.06.01"}, "plain_key": "\#(Self.canary)"}"#.utf8)
                .write(to: configURL)
            let retriever = KeyRetriever(
                sources: [keychainSource, try ConfigFileKeySource(url: configURL),
                          EnvironmentKeySource(prefix: "CANARY", environment: ["CANARY_ENV_KEY": Self.canary])],
                environment: .release, policy: KeyPolicy(sensitive: ["plain_key"]),
                allowsEnvironmentInRelease: true, logging: .enabled { collected.add($0) }, notificationCenter: nil)
            let key = try retriever.retrieve("api_key")
            #expect(key?.data == secret)
            collected.add(key as Any)
            collected.add(try retriever.retrieve("api_key", version: "2024.06.01") as Any)
            collected.add(try retriever.retrieve("env_key") as Any)
            do { _ = try retriever.retrieve("plain_key") } catch { collected.add(error) }
            collected.add(retriever.explain("api_key"))
            collected.add(retriever.explain("plain_key"))
            collected.add(try retriever.audit())
        }

        // Count only: a failure message must not print the leaked text itself.
        let leakCount = collected.all.filter(Self.leaks).count
        #expect(leakCount == 0, "the canary leaked into \(leakCount) of the collected texts")
        #expect(collected.all.count > 20, "the paths were exercised")
    }

    private func runInTemporaryKeychain(_ directory: URL, _ body: () throws -> Void) throws {
        #if os(Linux)
        try KeychainEnvironment.withEnvironment(
            KeychainEnvironment(directory: directory, accessGroups: ["com.example.canary"]), body)
        #else
        try body()
        #endif
    }
}
