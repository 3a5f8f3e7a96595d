// Reads run on several connections at once; a write acknowledged to one thread must be
// visible to the next read in every other thread (no reader may keep an older snapshot),
// and a delete as well. Not timed: the readers only check what they see.
import Foundation
import KeychainServices
import Testing

/// The highest write the writer thread has acknowledged so far (-1: none yet).
private final class Acknowledged: @unchecked Sendable {
    private let lock = NSLock()
    private var value = -1
    private var finished = false
    func set(_ new: Int) { lock.lock(); value = new; lock.unlock() }
    func finish() { lock.lock(); finished = true; lock.unlock() }
    var current: (value: Int, finished: Bool) { lock.lock(); defer { lock.unlock() }; return (value, finished) }
}

struct ReadVisibilityTests {
    private static func counterBytes(_ value: Int) -> Data {
        withUnsafeBytes(of: UInt64(value).littleEndian) { Data($0) }
    }

    private static func read(_ account: String) -> (status: OSStatus, data: Data?) {
        var query = genp("com.keysmith.visibility", account)
        query[kSecReturnData as String] = true
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        return (status, result as? Data)
    }

    @Test func aWriteAcknowledgedInOneThreadIsSeenByTheNextReadInEveryOtherThread() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        let writes = 150
        keychain.run {
            var add = genp("com.keysmith.visibility", "counter")
            add[kSecValueData as String] = Self.counterBytes(0)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            for i in 1...writes {
                var doomed = genp("com.keysmith.visibility", "gone-\(i)")
                doomed[kSecValueData as String] = Self.counterBytes(i)
                #expect(SecItemAdd(doomed as CFDictionary, nil) == errSecSuccess)
            }
        }
        let acknowledged = Acknowledged()
        let failures = ThreadFailures()
        let environment = keychain.environment
        // Thread 0 writes: update the counter to i, add item-i, delete gone-i; then
        // acknowledges i. Threads 1 to 3 read and check against the last acknowledgement
        // they saw before reading.
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            KeychainEnvironment.withEnvironment(environment) {
                if thread == 0 {
                    defer { acknowledged.finish() }
                    for i in 1...writes {
                        let change = [kSecValueData as String: Self.counterBytes(i)]
                        let updated = SecItemUpdate(
                            genp("com.keysmith.visibility", "counter") as CFDictionary, change as CFDictionary)
                        var add = genp("com.keysmith.visibility", "item-\(i)")
                        add[kSecValueData as String] = Self.counterBytes(i)
                        let added = SecItemAdd(add as CFDictionary, nil)
                        let deleted = SecItemDelete(genp("com.keysmith.visibility", "gone-\(i)") as CFDictionary)
                        guard updated == errSecSuccess, added == errSecSuccess, deleted == errSecSuccess else {
                            failures.record("write \(i): update \(updated), add \(added), delete \(deleted)")
                            return
                        }
                        acknowledged.set(i)
                    }
                    return
                }
                while true {
                    let (seen, finished) = acknowledged.current
                    let counter = Self.read("counter")
                    guard counter.status == errSecSuccess, let data = counter.data, data.count == 8 else {
                        failures.record("counter read: \(counter.status)")
                        return
                    }
                    let value = data.withUnsafeBytes { Int(UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))) }
                    if value < seen { failures.record("thread \(thread) read counter \(value) after write \(seen) was acknowledged") }
                    if seen >= 1 {
                        // What the acknowledged write added is there, what it deleted is gone.
                        let added = Self.read("item-\(seen)")
                        if added.status != errSecSuccess {
                            failures.record("thread \(thread): item-\(seen) missing after its add was acknowledged (\(added.status))")
                        }
                        if Self.read("gone-\(seen)").status != errSecItemNotFound {
                            failures.record("thread \(thread): gone-\(seen) still found after its delete was acknowledged")
                        }
                    }
                    if finished { return }
                }
            }
        }
        #expect(failures.messages.isEmpty, "\(failures.messages.prefix(5))")
        keychain.run {
            let final = Self.read("counter")
            #expect(final.data == Self.counterBytes(writes))
        }
    }

    @Test func aThreadThatReadBeforeAWriteSeesTheWriteOnItsNextRead() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        let environment = keychain.environment
        keychain.run {
            var add = genp("com.keysmith.visibility", "counter")
            add[kSecValueData as String] = Self.counterBytes(1)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        }
        // Two reader threads keep their connections between rounds; between two reads of
        // theirs the main thread writes, and each must see that write.
        for round in 2...20 {
            let failures = ThreadFailures()
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                KeychainEnvironment.withEnvironment(environment) {
                    let read = Self.read("counter")
                    if read.data != Self.counterBytes(round - 1) { failures.record("round \(round): stale \(read.status)") }
                }
            }
            #expect(failures.messages.isEmpty, "\(failures.messages)")
            keychain.run {
                let change = [kSecValueData as String: Self.counterBytes(round)]
                #expect(SecItemUpdate(
                    genp("com.keysmith.visibility", "counter") as CFDictionary, change as CFDictionary) == errSecSuccess)
            }
        }
    }
}
