// Several threads and several processes upserting and reading one keychain at once: no
// lost write, and SQLITE_BUSY never reaches a caller.
import Foundation
import KeychainServices
import Testing

/// The `keychain-workload` executable built next to the test bundle.
func workloadExecutable() -> URL {
    let products = Bundle.main.executableURL?.deletingLastPathComponent()
        ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    var candidate = products
    // On Linux the test binary sits directly in the products directory; on macOS it is
    // inside an .xctest bundle.
    for _ in 0..<4 {
        let url = candidate.appendingPathComponent("keychain-workload")
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        candidate.deleteLastPathComponent()
    }
    return products.appendingPathComponent("keychain-workload")
}

/// Starts the workload in another process on `keychain`.
func startWorkload(_ arguments: [String], keychain: TemporaryKeychain) throws -> (Process, Pipe) {
    let process = Process()
    process.executableURL = workloadExecutable()
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["KEYSMITH_HOME"] = keychain.directory.path
    environment["KEYSMITH_ACCESS_GROUPS"] = keychain.accessGroups.joined(separator: ",")
    process.environment = environment
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = Pipe()
    try process.run()
    return (process, errors)
}

struct ConcurrencyTests {
    @Test func fourThreadsAndFourProcessesLoseNoWrite() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        let perWriter = 150
        // Create the keychain first so that every writer opens an existing one.
        keychain.run { _ = SecItemCopyMatching(genp() as CFDictionary, nil) }

        var processes: [(Process, Pipe)] = []
        for index in 0..<4 {
            processes.append(try startWorkload(["upsert", "process\(index)", "\(perWriter)"], keychain: keychain))
        }
        processes.append(try startWorkload(["shared", "shared-item", "\(perWriter)"], keychain: keychain))

        let failures = ThreadFailures()
        let environment = keychain.environment
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            KeychainEnvironment.withEnvironment(environment) {
                for index in 0..<perWriter {
                    let account = "thread\(thread)-\(index)"
                    let value = Data("value-\(account)".utf8)
                    let query = [kSecClass as String: kSecClassGenericPassword,
                                 kSecAttrService as String: "com.keysmith.workload",
                                 kSecAttrAccount as String: account] as [String: Any]
                    var add = query
                    add[kSecValueData as String] = value
                    let status = SecItemAdd(add as CFDictionary, nil)
                    if status != errSecSuccess { failures.record("add \(account): \(status)") }
                    var lookup = query
                    lookup[kSecReturnData as String] = true
                    var result: CFTypeRef?
                    let readStatus = SecItemCopyMatching(lookup as CFDictionary, &result)
                    if readStatus != errSecSuccess || result as? Data != value {
                        failures.record("read \(account): \(readStatus)")
                    }
                    // The shared item is written by another process meanwhile.
                    var shared = query
                    shared[kSecAttrAccount as String] = "shared-item"
                    let sharedStatus = SecItemCopyMatching(shared as CFDictionary, nil)
                    if sharedStatus != errSecSuccess && sharedStatus != errSecItemNotFound {
                        failures.record("shared read: \(sharedStatus)")
                    }
                }
            }
        }
        for (process, errors) in processes {
            process.waitUntilExit()
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationStatus == 0, "\(message)")
        }
        #expect(failures.messages.isEmpty, "\(failures.messages.prefix(5))")

        // Every acknowledged write is there, with its value.
        keychain.run {
            var result: CFTypeRef?
            let all = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.workload",
                       kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
                       kSecReturnData as String: true] as [String: Any]
            #expect(SecItemCopyMatching(all as CFDictionary, &result) == errSecSuccess)
            let items = (result as? [[String: Any]]) ?? []
            var values: [String: Data] = [:]
            for item in items {
                if let account = item[kSecAttrAccount as String] as? String { values[account] = item[kSecValueData as String] as? Data }
            }
            #expect(items.count == 8 * perWriter + 1)
            for writer in (0..<4).map({ "process\($0)" }) + (0..<4).map({ "thread\($0)" }) {
                for index in 0..<perWriter {
                    let account = "\(writer)-\(index)"
                    #expect(values[account] == Data("value-\(account)".utf8), "\(account)")
                }
            }
            #expect(values["shared-item"] == Data("round-\(perWriter - 1)".utf8))
        }
    }
}

/// Failure messages collected from several threads.
final class ThreadFailures: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    func record(_ message: String) { lock.lock(); stored.append(message); lock.unlock() }
    var messages: [String] { lock.lock(); defer { lock.unlock() }; return stored }
}
