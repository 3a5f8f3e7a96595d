// Several processes and threads add, update, delete and read one keychain at once; the end
// state matches a model of the acknowledged operations, and no busy or locked error ever
// reaches a caller (each worker fails loudly on any unexpected status).
import Foundation
import KeychainServices
import Testing

struct ContentionTests {
    @Test func endStateMatchesTheModelOfAcknowledgedOperations() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { _ = SecItemCopyMatching(genp() as CFDictionary, nil) }
        let steps = StressLevel.pick(fast: 300, stress: 3_000)
        let workers = ["pA", "pB", "pC"]

        // Processes: run concurrently.
        let results = ThreadResults()
        DispatchQueue.concurrentPerform(iterations: workers.count + 2) { index in
            if index < workers.count {
                do {
                    let run = try runWorkload(["model", workers[index], "\(steps)"], keychain: keychain)
                    results.store(workers[index], run)
                } catch {
                    results.fail("\(workers[index]): \(error)")
                }
            } else {
                // Threads in this process: their own keys, same rules.
                let name = "t\(index)"
                let log = KeychainEnvironment.withEnvironment(keychain.environment) {
                    threadModelWorker(name: name, steps: steps)
                }
                results.store(name, WorkloadRun(status: log.failure == nil ? 0 : 1, reason: .exit, lines: log.lines, errors: log.failure ?? ""))
            }
        }
        #expect(results.failures.isEmpty, "\(results.failures)")

        var model: [String: String] = [:]
        for (name, run) in results.runs {
            #expect(run.status == 0, "\(name): \(run.errors)")
            for line in run.lines {
                let parts = line.split(separator: " ").map(String.init)
                if parts.count == 3, parts[0] == "set" { model[parts[1]] = parts[2] }
                if parts.count == 2, parts[0] == "del" { model[parts[1]] = nil }
            }
        }
        let items = keychain.run { workloadItems() }.mapValues { String(decoding: $0, as: UTF8.self) }
        #expect(items == model)
        #expect(integrityCheck(keychain) == "ok")
    }
}

/// The in-process counterpart of `keychain-workload model`.
func threadModelWorker(name: String, steps: Int) -> (lines: [String], failure: String?) {
    var lines: [String] = []
    var generator = SystemRandomNumberGenerator()
    func query(_ account: String) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.workload",
         kSecAttrAccount as String: account]
    }
    for step in 0..<steps {
        let account = "\(name)-\(Int.random(in: 0..<16, using: &generator))"
        switch Int.random(in: 0..<4, using: &generator) {
        case 0, 1:
            let value = "\(name)-\(step)"
            var status = SecItemUpdate(query(account) as CFDictionary, [kSecValueData as String: Data(value.utf8)] as CFDictionary)
            if status == errSecItemNotFound {
                status = SecItemAdd(query(account).merging([kSecValueData as String: Data(value.utf8)]) { $1 } as CFDictionary, nil)
            }
            guard status == errSecSuccess else { return (lines, "\(name) upsert: \(status)") }
            lines.append("set \(account) \(value)")
        case 2:
            let status = SecItemDelete(query(account) as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { return (lines, "\(name) delete: \(status)") }
            lines.append("del \(account)")
        default:
            let status = SecItemCopyMatching(query(account).merging([kSecReturnData as String: true]) { $1 } as CFDictionary, nil)
            guard status == errSecSuccess || status == errSecItemNotFound else { return (lines, "\(name) read: \(status)") }
        }
    }
    return (lines, nil)
}

final class ThreadResults: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var runs: [String: WorkloadRun] = [:]
    private(set) var failures: [String] = []
    func store(_ name: String, _ run: WorkloadRun) { lock.lock(); runs[name] = run; lock.unlock() }
    func fail(_ message: String) { lock.lock(); failures.append(message); lock.unlock() }
}
