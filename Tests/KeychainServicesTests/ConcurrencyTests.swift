// Several threads and several processes upserting and reading one keychain at once: no
// lost write, and SQLITE_BUSY never reaches a caller.
import Foundation
#if canImport(Glibc)
import Glibc
#endif
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
func startWorkload(
    _ arguments: [String], keychain: TemporaryKeychain, environment extra: [String: String] = [:]
) throws -> (Process, Pipe) {
    let process = Process()
    process.executableURL = workloadExecutable()
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["KEYSMITH_HOME"] = keychain.directory.path
    environment["KEYSMITH_ACCESS_GROUPS"] = keychain.accessGroups.joined(separator: ",")
    environment.merge(extra) { $1 }
    process.environment = environment
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = Pipe()
    try process.run()
    return (process, errors)
}

struct ConcurrencyTests {
    /// Several processes that open a keychain that does not exist yet, all at the same
    /// moment (they wait on a named pipe the test opens once all are started), each add to
    /// it: every one succeeds, and every item is there. Repeated, each round on a new
    /// keychain, so the creation race is run many times.
    @Test func processesCreatingTheSameKeychainAtOnceAllSucceed() throws {
        let rounds = ProcessInfo.processInfo.environment["KEYSMITH_STRESS"] == nil ? 12 : 100
        let writers = 6
        for round in 0..<rounds {
            let keychain = TemporaryKeychain()
            defer { keychain.remove() }
            try? FileManager.default.removeItem(at: keychain.directory)
            let gate = FileManager.default.temporaryDirectory.appendingPathComponent("keysmith-gate-\(UUID().uuidString)").path
            try #require(mkfifo(gate, 0o600) == 0)
            defer { unlink(gate) }
            var processes: [(Process, Pipe)] = []
            for index in 0..<writers {
                processes.append(try startWorkload(
                    ["upsert", "round\(round)-writer\(index)", "2"], keychain: keychain,
                    environment: ["KEYSMITH_WORKLOAD_GATE": gate]))
            }
            // Once every writer is at the gate, opening the pipe for writing lets them all go.
            let gateName = URL(fileURLWithPath: gate).lastPathComponent
            func waiting() -> Int {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? []
                return names.filter { $0.hasPrefix(gateName + ".ready.") }.count
            }
            while waiting() < writers, processes.allSatisfy({ $0.0.isRunning }) { usleep(10_000) }
            defer {
                for process in processes { unlink("\(gate).ready.\(process.0.processIdentifier)") }
            }
            let opener = open(gate, O_RDWR | O_NONBLOCK)
            try #require(opener >= 0)
            var messages: [String] = []
            for (process, errors) in processes {
                process.waitUntilExit()
                let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                if process.terminationStatus != 0 { messages.append(message) }
            }
            close(opener)
            #expect(messages.isEmpty, "round \(round): \(messages.count) of \(writers) writers failed: \(messages.prefix(3))")
            keychain.run {
                var result: CFTypeRef?
                let all = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.workload",
                           kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true] as [String: Any]
                #expect(SecItemCopyMatching(all as CFDictionary, &result) == errSecSuccess)
                #expect((result as? [[String: Any]])?.count == writers * 2, "round \(round)")
            }
            if !messages.isEmpty { break }
        }
    }

    @Test func fourThreadsAndFourProcessesLoseNoWrite() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        let perWriter = 150
        // Create the keychain first so that every writer opens an existing one (a read does
        // not create a keychain; an add does). The item is in another service than the
        // writers' and is not counted below.
        keychain.run {
            #expect(SecItemAdd(genp().with(kSecValueData, Data("setup".utf8)) as CFDictionary, nil) == errSecSuccess)
        }
        #expect(FileManager.default.fileExists(atPath: keychain.directory.appendingPathComponent("keychain.db").path))

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
