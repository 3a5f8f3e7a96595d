// A writer killed with SIGKILL at random moments while it writes: after every kill the
// keychain opens, passes PRAGMA integrity_check, and holds every write acknowledged before
// the kill. Each kill comes a random delay after the writer's first acknowledged write, so
// (almost) every round has acknowledged writes to check; the test counts those rounds.
// 25 kills in `make test`, 200 in `make stress`. (A kill leaves the data in the kernel's
// page cache: what survives power loss is DurabilityTests' subject.)
import Foundation
import KeychainServices
import Testing

struct CrashSafetyTests {
    @Test func killedWriterLosesNoAcknowledgedWrite() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { _ = SecItemCopyMatching(genp() as CFDictionary, nil) }  // create it
        let rounds = StressLevel.pick(fast: 25, stress: 200)
        var generator = SystemRandomNumberGenerator()
        var acknowledgedTotal = 0
        var checkedRounds = 0
        for round in 0..<rounds {
            let prefix = "r\(round)"
            let delay = Double.random(in: 0...0.2, using: &generator)
            let run = try runWorkload(["churn", prefix, "100000"], keychain: keychain, killAfter: delay)
            #expect(run.reason == .uncaughtSignal, "round \(round): the writer ended by itself: \(run.errors)")

            #expect(integrityCheck(keychain) == "ok", "round \(round)")
            var added = Set<Int>()
            var rotated = Set<Int>()
            for line in run.lines {
                let parts = line.split(separator: " ")
                guard parts.count == 2, let index = Int(parts[1]) else { continue }
                if parts[0] == "add" { added.insert(index) } else if parts[0] == "upd" { rotated.insert(index) }
            }
            acknowledgedTotal += added.count + rotated.count
            if !added.isEmpty { checkedRounds += 1 }
            let items = keychain.run { workloadItems() }
            for index in added {
                let account = "\(prefix)-\(index)"
                let value = items[account].map { String(decoding: $0, as: UTF8.self) }
                if rotated.contains(index) {
                    #expect(value == "v2-\(account)", "round \(round): rotation of \(account) lost")
                } else {
                    // Acknowledged add; an unacknowledged rotation may or may not have landed.
                    #expect(value == "v1-\(account)" || value == "v2-\(account)", "round \(round): \(account) lost")
                }
            }
        }
        // Rounds without an acknowledged write check nothing; nearly all must have some.
        #expect(checkedRounds * 10 >= rounds * 9, "only \(checkedRounds) of \(rounds) rounds checked an acknowledged write")
        #expect(acknowledgedTotal > rounds, "the writer made progress before the kills")
    }
}
