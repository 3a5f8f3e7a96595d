// Several processes and threads add, update, delete and read the same few items of one
// keychain at once, so writers race on one item (update, not found, add, duplicate, update
// again). No busy, locked or duplicate error reaches a caller (each worker fails loudly on
// any unexpected status), and the end state is one that some serial order of the
// acknowledged operations gives: each item holds the value, or is absent as, the last
// operation of one of the writers that touched it left it, and each is stored exactly once.
// More processes than the machine has cores, so the scheduler interleaves them.
import Foundation
import KeychainServices
import Testing

struct ContentionTests {
    @Test func endStateIsOneThatSomeSerialOrderOfTheAcknowledgedOperationsGives() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { _ = SecItemCopyMatching(genp() as CFDictionary, nil) }
        let steps = StressLevel.pick(fast: 300, stress: 3_000)
        let processCount = max(4, ProcessInfo.processInfo.activeProcessorCount + 2)
        let workers = (0..<processCount).map { "p\($0)" }
        let threadCount = 2

        let results = ThreadResults()
        // One thread per worker (concurrentPerform would run only as many as there are cores).
        let finished = DispatchGroup()
        for index in 0..<(workers.count + threadCount) {
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                if index < workers.count {
                    do {
                        let run = try runWorkload(["model", workers[index], "\(steps)"], keychain: keychain)
                        results.store(workers[index], run)
                    } catch {
                        results.fail("\(workers[index]): \(error)")
                    }
                } else {
                    // Threads in this process, on the same shared items, by the same rules.
                    let name = "t\(index)"
                    let log = KeychainEnvironment.withEnvironment(keychain.environment) {
                        threadModelWorker(name: name, steps: steps)
                    }
                    results.store(name, WorkloadRun(status: log.failure == nil ? 0 : 1, reason: .exit, lines: log.lines, errors: log.failure ?? ""))
                }
            }
        }
        finished.wait()
        #expect(results.failures.isEmpty, "\(results.failures)")
        #expect(results.runs.count == workers.count + threadCount)

        // Per item, the state each writer's last acknowledged operation left (nil: deleted).
        var lastByWriter: [String: [String: String?]] = [:]
        var writes = 0
        for (name, run) in results.runs {
            #expect(run.status == 0, "\(name): \(run.errors)")
            for line in run.lines {
                let parts = line.split(separator: " ").map(String.init)
                if parts.count == 3, parts[0] == "set" {
                    lastByWriter[parts[1], default: [:]][name] = .some(parts[2])
                    writes += 1
                } else if parts.count == 2, parts[0] == "del" {
                    lastByWriter[parts[1], default: [:]][name] = .some(nil)
                    writes += 1
                }
            }
        }
        #expect(writes > steps, "the writers acknowledged \(writes) writes")
        #expect(lastByWriter.values.contains { $0.count > 1 }, "no item was written by more than one writer")

        let accounts = keychain.run { workloadAccounts() }
        let items = keychain.run { workloadItems() }.mapValues { String(decoding: $0, as: UTF8.self) }
        #expect(accounts.count == Set(accounts).count, "an item is stored more than once: \(accounts.sorted())")
        #expect(accounts.count == items.count)
        for account in Set(items.keys).union(lastByWriter.keys).sorted() {
            let candidates = lastByWriter[account].map { Array($0.values) } ?? []
            let final = items[account]
            #expect(
                candidates.contains { $0 == final },
                "\(account) is \(final ?? "absent"); the writers last left it as \(candidates.map { $0 ?? "absent" })")
        }
        #expect(integrityCheck(keychain) == "ok")
    }
}

/// The in-process counterpart of `keychain-workload model`: the same shared items.
func threadModelWorker(name: String, steps: Int) -> (lines: [String], failure: String?) {
    var lines: [String] = []
    var generator = SystemRandomNumberGenerator()
    func query(_ account: String) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.workload",
         kSecAttrAccount as String: account]
    }
    func upsert(_ account: String, _ value: Data) -> OSStatus {
        for _ in 0..<1_000 {
            let status = SecItemUpdate(query(account) as CFDictionary, [kSecValueData as String: value] as CFDictionary)
            if status != errSecItemNotFound { return status }
            let added = SecItemAdd(query(account).merging([kSecValueData as String: value]) { $1 } as CFDictionary, nil)
            if added != errSecDuplicateItem { return added }
        }
        return errSecDuplicateItem
    }
    for step in 0..<steps {
        let account = "shared-\(Int.random(in: 0..<8, using: &generator))"
        switch Int.random(in: 0..<4, using: &generator) {
        case 0, 1:
            let value = "\(name)-\(step)"
            let status = upsert(account, Data(value.utf8))
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
