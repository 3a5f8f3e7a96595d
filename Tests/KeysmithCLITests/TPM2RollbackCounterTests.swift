#if os(Linux)
import CLoadOnUse
import CSQLite
import Foundation
import Testing

/// The rollback anchor bound to a TPM NV monotonic counter (TPM key store), against software
/// TPMs (swtpm): a whole keychain directory put back from an older copy is refused, the reset
/// file accepts it on purpose, two keychains on one TPM keep counters of their own, and NV
/// writes stay within one per epoch.
@Suite(.enabled(if: SoftwareTPM.isInstalled, "swtpm is not installed (make deps installs it)"))
struct TPM2RollbackCounterTests {
    /// Every write a new epoch (the debug build's test setting): each write increments.
    static let everyWrite = ["KEYSMITH_TPM2_COUNTER_EPOCH": "0"]

    func run(_ arguments: [String], _ home: TemporaryHome, _ tpm: SoftwareTPM, keychain: URL? = nil,
             standardInput: String? = nil, extra: [String: String] = [:]) throws -> RunResult {
        var environment = extra
        environment["KEYSMITH_TPM2_TCTI"] = tpm.tcti
        let directory = keychain ?? home.keychain
        return try keysmith(["--keychain", directory.path] + arguments, home: home, standardInput: standardInput,
                            environment: environment, useKeychainFlag: false)
    }

    func store(_ secret: String, account: String = "a", _ home: TemporaryHome, _ tpm: SoftwareTPM, keychain: URL? = nil,
               extra: [String: String] = everyWrite) throws {
        let added = try run(["add-generic-password", "-U", "-s", "tpm.rollback", "-a", account, "--stdin", "--accessible", "always"],
                            home, tpm, keychain: keychain, standardInput: secret + "\n", extra: extra)
        #expect(added.status == 0, "\(added)")
    }

    func read(account: String = "a", _ home: TemporaryHome, _ tpm: SoftwareTPM, keychain: URL? = nil) throws -> RunResult {
        try run(["find-generic-password", "-s", "tpm.rollback", "-a", account, "-w"], home, tpm, keychain: keychain)
    }

    /// The counter the keychain's anchor records: its NV handle and value (`KSANCH02` layout).
    static func anchorCounter(in keychain: URL) throws -> (handle: UInt32, value: UInt64) {
        let bytes = [UInt8](try Data(contentsOf: keychain.appendingPathComponent("keychain.anchor")))
        try #require(bytes.count == 157 && bytes.prefix(8).elementsEqual("KSANCH02".utf8), "the anchor is not bound to a counter")
        let offset = 8 + 16 + 40 + 1 + 40
        let handle = bytes[offset..<(offset + 4)].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let value = bytes[(offset + 4)..<(offset + 12)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return (handle, value)
    }

    /// The value the TPM's counter at `handle` holds, read from outside the keychain (the
    /// index's tag is not known here, so its public area is read with tpm2-tools' reader).
    static func tpmCounter(_ tpm: SoftwareTPM, handle: UInt32) throws -> UInt64 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tpm2_nvread")
        process.arguments = ["-T", tpm.tcti, "-C", "0x" + String(handle, radix: 16), "-s", "8", "0x" + String(handle, radix: 16)]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        try waitForExit(process, seconds: 60)
        try #require(process.terminationStatus == 0 && data.count == 8, "tpm2_nvread failed")
        return data.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    func replace(_ keychain: URL, with copy: URL) throws {
        try FileManager.default.removeItem(at: keychain)
        try FileManager.default.copyItem(at: copy, to: keychain)
    }

    @Test func wholeKeychainPutBackFromAnOlderCopyIsRefusedAndTheResetFileAcceptsIt() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "restore")
        defer { tpm.stop() }
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm).status == 0)
        try store("first secret", home, tpm)
        // The copy a backup (or a same-user attacker) keeps: database, anchor, verification
        // record, sealed key, everything.
        let copy = home.url.appendingPathComponent("older-copy")
        try FileManager.default.copyItem(at: home.keychain, to: copy)
        try store("second secret", home, tpm)
        try store("third secret", home, tpm)
        let currentDirectory = home.url.appendingPathComponent("current")
        try FileManager.default.copyItem(at: home.keychain, to: currentDirectory)

        try replace(home.keychain, with: copy)
        let refused = try read(home, tpm)
        #expect(refused.status != 0, "\(refused)")
        #expect(!refused.stdout.contains("secret"))
        #expect(refused.stderr.contains("older copy"), "\(refused)")
        #expect(refused.stderr.contains("touch \(home.keychain.path)/keychain.anchor.reset"), "\(refused)")
        let copied = try Self.anchorCounter(in: copy)
        let current = try Self.anchorCounter(in: currentDirectory)
        #expect(current.handle == copied.handle)
        #expect(current.value > copied.value, "each write (epoch 0) increments: \(copied.value) -> \(current.value)")
        #expect(try Self.tpmCounter(tpm, handle: current.handle) == current.value)
        // Writing is refused too, and changes nothing.
        let write = try run(["add-generic-password", "-U", "-s", "tpm.rollback", "-a", "a", "--stdin", "--accessible", "always"],
                            home, tpm, standardInput: "over it\n", extra: Self.everyWrite)
        #expect(write.status != 0, "\(write)")

        // Accepted on purpose: the restored secret is back, and the anchor is bound again to
        // the counter as it is now (incremented), so the copy is older than it too.
        FileManager.default.createFile(atPath: home.keychain.appendingPathComponent("keychain.anchor.reset").path, contents: nil)
        let accepted = try read(home, tpm)
        #expect(accepted.status == 0, "\(accepted)")
        #expect(accepted.stdout == "first secret\n")
        #expect(!FileManager.default.fileExists(atPath: home.keychain.appendingPathComponent("keychain.anchor.reset").path))
        let rebound = try Self.anchorCounter(in: home.keychain)
        #expect(rebound.value > current.value)
        #expect(try Self.tpmCounter(tpm, handle: rebound.handle) == rebound.value)
        #expect(try read(home, tpm).stdout == "first secret\n", "a later open accepts the rebound anchor")

        try replace(home.keychain, with: copy)
        let again = try read(home, tpm)
        #expect(again.status != 0 && again.stderr.contains("older copy"), "\(again)")
    }

    @Test func twoKeychainsOnOneTPMKeepCountersOfTheirOwn() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "shared")
        defer { tpm.stop() }
        let first = home.url.appendingPathComponent("first")
        let second = home.url.appendingPathComponent("second")
        for keychain in [first, second] {
            #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm, keychain: keychain).status == 0)
        }
        try store("first keychain", home, tpm, keychain: first)
        try store("second keychain", home, tpm, keychain: second)
        let firstCounter = try Self.anchorCounter(in: first)
        let secondCounter = try Self.anchorCounter(in: second)
        #expect(firstCounter.handle != secondCounter.handle)

        let copy = home.url.appendingPathComponent("first-copy")
        try FileManager.default.copyItem(at: first, to: copy)
        // Writes to the second keychain do not move the first one's counter...
        for round in 0..<3 { try store("second keychain \(round)", home, tpm, keychain: second) }
        #expect(try Self.tpmCounter(tpm, handle: firstCounter.handle) == firstCounter.value)
        #expect(try read(home, tpm, keychain: first).stdout == "first keychain\n")
        // ...and a restore of the first is refused while the second reads on.
        try store("first keychain, later", home, tpm, keychain: first)
        try replace(first, with: copy)
        let refused = try read(home, tpm, keychain: first)
        #expect(refused.status != 0 && refused.stderr.contains("older copy"), "\(refused)")
        #expect(try read(home, tpm, keychain: second).stdout == "second keychain 2\n")
    }

    @Test func writesOfOneEpochIncrementTheCounterOnceAndAPassphraseChangeAlways() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "epoch")
        defer { tpm.stop() }
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm).status == 0)
        let created = try Self.anchorCounter(in: home.keychain)
        // Ten writes in ten processes, within one epoch (the default, ten minutes): no NV write.
        for round in 0..<10 { try store("secret \(round)", account: "a\(round)", home, tpm, extra: [:]) }
        let afterWrites = try Self.anchorCounter(in: home.keychain)
        #expect(afterWrites == created, "writes within an epoch wrote the TPM's NV memory")
        #expect(try Self.tpmCounter(tpm, handle: created.handle) == created.value)
        // The bound that docs/SECURITY.md states: a copy from within the epoch is not caught
        // by the counter (the anchor's own checks still apply).
        // A passphrase change starts a new epoch at once.
        let passwd = try run(["passwd", "--stdin"], home, tpm, standardInput: "new passphrase\n")
        #expect(passwd.status == 0, "\(passwd)")
        let afterPasswd = try Self.anchorCounter(in: home.keychain)
        #expect(afterPasswd.value == created.value + 1, "\(created.value) -> \(afterPasswd.value)")
        #expect(try Self.tpmCounter(tpm, handle: created.handle) == afterPasswd.value)
    }

    @Test(arguments: ["tpm-counter-before-increment", "tpm-counter-after-increment"])
    func writerKilledAroundTheIncrementLeavesAKeychainThatOpens(_ crashPoint: String) throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "crash")
        defer { tpm.stop() }
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm).status == 0)
        try store("before the kill", home, tpm)
        let before = try Self.anchorCounter(in: home.keychain)
        let killed = try run(["add-generic-password", "-U", "-s", "tpm.rollback", "-a", "a", "--stdin", "--accessible", "always"],
                             home, tpm, standardInput: "never committed\n",
                             extra: Self.everyWrite.merging(["KEYSMITH_CRASH_AT": crashPoint]) { $1 })
        #expect(killed.status != 0, "the writer was not killed at \(crashPoint): \(killed)")
        // The anchor records the value the counter was about to reach; the TPM holds it, or
        // one less when the kill came before the increment: both open.
        let anchored = try Self.anchorCounter(in: home.keychain)
        #expect(anchored.value == before.value + 1)
        let held = try Self.tpmCounter(tpm, handle: before.handle)
        #expect(held == (crashPoint == "tpm-counter-before-increment" ? before.value : before.value + 1))
        let reopened = try read(home, tpm)
        #expect(reopened.stdout == "before the kill\n", "\(reopened)")
        // The next epoch brings counter and anchor together again, one ahead.
        try store("after the kill", home, tpm)
        let after = try Self.anchorCounter(in: home.keychain)
        #expect(try Self.tpmCounter(tpm, handle: after.handle) == after.value)
        #expect(try read(home, tpm).stdout == "after the kill\n")
    }

    /// Runs `sql` on the keychain's database file directly (what anyone with the user's file
    /// access can do), outside Keysmith.
    static func editDatabase(_ keychain: URL, _ sql: String) {
        var handle: OpaquePointer?
        #expect(sqlite3_open(keychain.appendingPathComponent("keychain.db").path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        sqlite3_busy_timeout(handle, 5000)
        #expect(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK, "\(sql)")
    }

    @Test func olderCopyWithItsAnchorAndStateRecordRemovedIsRefused() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "unanchored")
        defer { tpm.stop() }
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm).status == 0)
        try store("first secret", home, tpm)
        let copy = home.url.appendingPathComponent("older-copy")
        try FileManager.default.copyItem(at: home.keychain, to: copy)
        try store("second secret", home, tpm)
        // The older copy made to look like a keychain that was never anchored: no anchor, no
        // verification record, no state record in the database (file access and sqlite3 only).
        try replace(home.keychain, with: copy)
        for name in ["keychain.anchor", "keychain.verified"] {
            try? FileManager.default.removeItem(at: home.keychain.appendingPathComponent(name))
        }
        Self.editDatabase(home.keychain, "DELETE FROM meta WHERE key = 'anchor-state'; PRAGMA wal_checkpoint(TRUNCATE)")
        let refused = try read(home, tpm)
        #expect(refused.status != 0, "\(refused)")
        #expect(!refused.stdout.contains("secret"), "\(refused)")
        #expect(refused.stderr.contains("anchor"), "\(refused)")
        #expect(refused.stderr.contains("touch \(home.keychain.path)/keychain.anchor.reset"), "\(refused)")
        // Nothing was written: the reset file still accepts the database as it is.
        FileManager.default.createFile(atPath: home.keychain.appendingPathComponent("keychain.anchor.reset").path, contents: nil)
        let accepted = try read(home, tpm)
        #expect(accepted.stdout == "first secret\n", "\(accepted)")
    }

    @Test func copyMadeAfterAnInterruptedIncrementIsRefusedAfterTheNextEpoch() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "slack")
        defer { tpm.stop() }
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm).status == 0)
        try store("before the kill", home, tpm)
        let before = try Self.anchorCounter(in: home.keychain)
        // A writer killed between the anchor's write and the counter's increment (the user's
        // own process, or one an attacker with the user's rights kills on purpose).
        let killed = try run(["add-generic-password", "-U", "-s", "tpm.rollback", "-a", "a", "--stdin", "--accessible", "always"],
                             home, tpm, standardInput: "never committed\n",
                             extra: Self.everyWrite.merging(["KEYSMITH_CRASH_AT": "tpm-counter-before-increment"]) { $1 })
        #expect(killed.status != 0, "\(killed)")
        #expect(try Self.tpmCounter(tpm, handle: before.handle) == before.value)
        // Writes of the epoch the interrupted increment started, and a copy of them.
        try store("in the interrupted epoch", home, tpm, extra: [:])
        let copy = home.url.appendingPathComponent("copy")
        try FileManager.default.copyItem(at: home.keychain, to: copy)
        #expect(try Self.anchorCounter(in: copy).value == before.value + 1)
        // The next epoch: the copy is from an earlier epoch and must be older than the counter.
        try store("next epoch", home, tpm)
        let after = try Self.anchorCounter(in: home.keychain)
        #expect(try Self.tpmCounter(tpm, handle: after.handle) == after.value)
        try replace(home.keychain, with: copy)
        let refused = try read(home, tpm)
        #expect(refused.status != 0, "\(refused)")
        #expect(refused.stderr.contains("older copy"), "\(refused)")
        #expect(!refused.stdout.contains("epoch"), "\(refused)")
    }

    @Test func copyFromBeforeAnInterruptedIncrementIsRefusedAtTheNextOpen() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "interrupted")
        defer { tpm.stop() }
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm).status == 0)
        try store("copied", home, tpm)
        let copy = home.url.appendingPathComponent("copy")
        try FileManager.default.copyItem(at: home.keychain, to: copy)
        // A new epoch's write killed between the anchor's write and the counter's increment.
        let killed = try run(["add-generic-password", "-U", "-s", "tpm.rollback", "-a", "a", "--stdin", "--accessible", "always"],
                             home, tpm, standardInput: "never committed\n",
                             extra: Self.everyWrite.merging(["KEYSMITH_CRASH_AT": "tpm-counter-before-increment"]) { $1 })
        #expect(killed.status != 0, "\(killed)")
        // The next open completes the increment: the copy from the epoch before is older.
        let reopened = try read(home, tpm)
        #expect(reopened.stdout == "copied\n", "\(reopened)")
        let anchored = try Self.anchorCounter(in: home.keychain)
        #expect(try Self.tpmCounter(tpm, handle: anchored.handle) == anchored.value)
        try replace(home.keychain, with: copy)
        let refused = try read(home, tpm)
        #expect(refused.status != 0 && refused.stderr.contains("older copy"), "\(refused)")
    }

    @Test func resetMakesACopyFromAnInterruptedEpochOlderToo() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "reset-slack")
        defer { tpm.stop() }
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm).status == 0)
        try store("backed up", home, tpm)
        let backup = home.url.appendingPathComponent("backup")
        try FileManager.default.copyItem(at: home.keychain, to: backup)
        try store("later", home, tpm)
        // An increment interrupted: the anchor (and a copy of the keychain now) one ahead.
        let killed = try run(["add-generic-password", "-U", "-s", "tpm.rollback", "-a", "a", "--stdin", "--accessible", "always"],
                             home, tpm, standardInput: "never committed\n",
                             extra: Self.everyWrite.merging(["KEYSMITH_CRASH_AT": "tpm-counter-before-increment"]) { $1 })
        #expect(killed.status != 0, "\(killed)")
        let ahead = home.url.appendingPathComponent("ahead")
        try FileManager.default.copyItem(at: home.keychain, to: ahead)
        // The owner restores the backup and accepts it: every anchor written before is older.
        try replace(home.keychain, with: backup)
        FileManager.default.createFile(atPath: home.keychain.appendingPathComponent("keychain.anchor.reset").path, contents: nil)
        #expect(try read(home, tpm).stdout == "backed up\n")
        try replace(home.keychain, with: ahead)
        let refused = try read(home, tpm)
        #expect(refused.status != 0 && refused.stderr.contains("older copy"), "\(refused)")
        #expect(!refused.stdout.contains("later"), "\(refused)")
    }

    @Test func statusNamesTheTPMAndTheRollbackCounter() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "status")
        defer { tpm.stop() }
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm).status == 0)
        try store("counted", home, tpm)
        let bound = try Self.anchorCounter(in: home.keychain)
        let index = "0x" + String(bound.handle, radix: 16)
        let status = try run(["status"], home, tpm)
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("device key        TPM 2.0 (\(tpm.tcti))"), "\(status)")
        #expect(status.stdout.contains("rollback counter  TPM NV index \(index), at \(bound.value)"), "\(status)")
        let json = try run(["--json", "status"], home, tpm)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json)")
        let counter = try #require(object["rollbackCounter"] as? [String: Any], "\(json)")
        #expect(counter["nvIndex"] as? String == index)
        #expect((counter["value"] as? NSNumber)?.uint64Value == bound.value)
        // A keychain with the key file store has none.
        let plain = home.url.appendingPathComponent("plain")
        #expect(try run(["create", "--no-passphrase", "--key-store", "file"], home, tpm, keychain: plain).status == 0)
        let plainStatus = try run(["status"], home, tpm, keychain: plain)
        #expect(plainStatus.stdout.contains("rollback counter  none (only the TPM key store has one"), "\(plainStatus)")
    }

    /// Runs one of tpm2-tools' programs against `tpm`; its standard output.
    @discardableResult
    static func tpm2Tool(_ name: String, _ arguments: [String], _ tpm: SoftwareTPM) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/" + name)
        process.arguments = ["-T", tpm.tcti] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        try waitForExit(process, seconds: 60)
        try #require(process.terminationStatus == 0, "\(name) \(arguments) failed")
        return String(decoding: data, as: UTF8.self)
    }

    @Test func squatterCounterWithTheKeychainsTagIsNotTakenForItsOwn() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "squatter")
        defer { tpm.stop() }
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm).status == 0)
        try store("kept", home, tpm)
        let bound = try Self.anchorCounter(in: home.keychain)
        let index = "0x" + String(bound.handle, radix: 16)
        // Another program (the user's rights and the owner hierarchy's empty authorization)
        // reads the counter's public tag, removes the counter and defines its own in its
        // place: a counter with the same attributes and tag, and an authorization value of its own.
        let description = try Self.tpm2Tool("tpm2_nvreadpublic", [index], tpm)
        let tagHex = try #require(description.split(separator: "\n").first { $0.contains("authorization policy:") }?
            .split(separator: ":").last?.trimmingCharacters(in: .whitespaces))
        let tag = Data(stride(from: 0, to: tagHex.count, by: 2).map { offset -> UInt8 in
            let start = tagHex.index(tagHex.startIndex, offsetBy: offset)
            return UInt8(tagHex[start..<tagHex.index(start, offsetBy: 2)], radix: 16)!
        })
        try #require(tag.count == 32)
        let policy = home.url.appendingPathComponent("forged-tag")
        try tag.write(to: policy)
        try Self.tpm2Tool("tpm2_nvundefine", [index], tpm)
        try Self.tpm2Tool(
            "tpm2_nvdefine", [index, "-C", "o", "-s", "8", "-a", "nt=counter|authread|authwrite|no_da", "-L", policy.path, "-p", "squatter"], tpm)

        let refused = try read(home, tpm)
        #expect(refused.status != 0, "\(refused)")
        #expect(refused.stderr.contains("no longer the keychain's rollback counter"), "\(refused)")
        #expect(refused.stderr.contains("keychain.anchor.reset"), "\(refused)")
        // The way out works: the keychain gets a counter of its own at another handle.
        FileManager.default.createFile(atPath: home.keychain.appendingPathComponent("keychain.anchor.reset").path, contents: nil)
        let accepted = try read(home, tpm)
        #expect(accepted.stdout == "kept\n", "\(accepted)")
        let rebound = try Self.anchorCounter(in: home.keychain)
        #expect(rebound.handle != bound.handle)
        #expect(try Self.tpmCounter(tpm, handle: rebound.handle) == rebound.value)
        #expect(try read(home, tpm).stdout == "kept\n")
    }

    @Test func deletingTheKeychainRemovesItsCounterFromTheTPM() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "delete")
        defer { tpm.stop() }
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm).status == 0)
        try store("gone soon", home, tpm)
        let bound = try Self.anchorCounter(in: home.keychain)
        #expect(try Self.tpmCounter(tpm, handle: bound.handle) == bound.value)
        let deleted = try run(["delete-keychain"], home, tpm)
        #expect(deleted.status == 0, "\(deleted)")
        #expect(!FileManager.default.fileExists(atPath: home.keychain.path), "the keychain directory is left")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tpm2_nvreadpublic")
        process.arguments = ["-T", tpm.tcti, "0x" + String(bound.handle, radix: 16)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try waitForExit(process, seconds: 60)
        #expect(process.terminationStatus != 0, "NV index 0x\(String(bound.handle, radix: 16)) is still defined")
    }

    @Test func counterRemovedFromTheTPMRefusesWithTheResetAsTheWayOut() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "removed")
        defer { tpm.stop() }
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm).status == 0)
        try store("kept", home, tpm)
        let bound = try Self.anchorCounter(in: home.keychain)
        let undefine = Process()
        undefine.executableURL = URL(fileURLWithPath: "/usr/bin/tpm2_nvundefine")
        undefine.arguments = ["-T", tpm.tcti, "0x" + String(bound.handle, radix: 16)]
        undefine.standardOutput = FileHandle.nullDevice
        undefine.standardError = FileHandle.nullDevice
        try undefine.run()
        try waitForExit(undefine, seconds: 60)
        try #require(undefine.terminationStatus == 0)

        let refused = try read(home, tpm)
        #expect(refused.status != 0, "\(refused)")
        #expect(refused.stderr.contains("rollback counter was removed"), "\(refused)")
        #expect(refused.stderr.contains("keychain.anchor.reset"), "\(refused)")
        FileManager.default.createFile(atPath: home.keychain.appendingPathComponent("keychain.anchor.reset").path, contents: nil)
        #expect(try read(home, tpm).stdout == "kept\n")
        let rebound = try Self.anchorCounter(in: home.keychain)
        // A counter defined again starts at the highest value a counter of this TPM held.
        #expect(rebound.value > bound.value)
        #expect(try Self.tpmCounter(tpm, handle: rebound.handle) == rebound.value)
    }
}
#endif
