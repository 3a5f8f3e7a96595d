#if os(Linux)
import CLoadOnUse
import Foundation
import Testing

/// Moving a key file keychain's device key into the TPM (killed at every step), sealing a
/// PCR-bound key again after the passphrase proves the user, and the TPM PIN, against
/// software TPMs (swtpm).
@Suite(.enabled(if: SoftwareTPM.isInstalled, "swtpm is not installed (make deps installs it)"))
struct TPM2DeviceKeyMoveTests {
    static let fast = ["KEYSMITH_KDF_PROFILE": "fast"]
    let tpmTests = TPM2KeyStoreTests()

    func run(_ arguments: [String], _ home: TemporaryHome, _ tpm: SoftwareTPM?, standardInput: String? = nil,
             extra: [String: String] = [:]) throws -> RunResult {
        try tpmTests.run(arguments, home, tpm, standardInput: standardInput, extra: Self.fast.merging(extra) { $1 })
    }

    /// The items every test stores: class D (always), class C (after first unlock), class A.
    static let items = [("d", "always", "class-d-secret"), ("c", "afterFirstUnlock", "class-c-secret"), ("a", "whenUnlocked", "class-a-secret")]

    func addItems(_ home: TemporaryHome, _ tpm: SoftwareTPM?) throws {
        for (account, accessibility, secret) in Self.items {
            let added = try run(
                ["add-generic-password", "-s", "tpm.move", "-a", account, "--stdin", "--accessible", accessibility], home, tpm,
                standardInput: secret + "\n")
            #expect(added.status == 0, "\(added)")
        }
    }

    /// Every item reads back (in a new process, finding the key store by itself, or with `extra`).
    func expectItems(_ home: TemporaryHome, _ tpm: SoftwareTPM?, _ when: String, extra: [String: String] = [:]) throws {
        for (account, _, secret) in Self.items {
            let read = try run(["find-generic-password", "-s", "tpm.move", "-a", account, "-w"], home, tpm, extra: extra)
            #expect(read.status == 0 && read.stdout == secret + "\n", "\(when), item \(account): \(read)")
        }
    }

    /// The 32 key bytes of the key file.
    func keyFileKey(_ home: TemporaryHome) throws -> [UInt8] {
        let bytes = [UInt8](try Data(contentsOf: home.keychain.appendingPathComponent("device.key")))
        try #require(bytes.count == 40 && Array(bytes.prefix(8)) == Array("KSDEVK01".utf8))
        return Array(bytes[8...])
    }

    /// No file in the keychain directory (hidden ones included) holds the key or its start.
    func expectNoFileHolds(_ key: [UInt8], in home: TemporaryHome, _ when: String) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: home.keychain.path) {
            let bytes = [UInt8](try Data(contentsOf: home.keychain.appendingPathComponent(name)))
            #expect(!TPM2KeyStoreTests.contains(bytes, key), "\(when): \(name) holds the device key")
            #expect(!TPM2KeyStoreTests.contains(bytes, Array(key[0..<8])), "\(when): \(name) holds the start of the device key")
        }
    }

    @Test func moveFromKeyFileIntoTheTPMKilledAtEachStepLosesNothing() throws {
        for point in ["move-sealed", "move-installed", "move-overwritten", nil] {
            let home = TemporaryHome()
            let tpm = try SoftwareTPM(in: home, name: "move")
            defer { tpm.stop() }
            #expect(try run(["create", "--no-passphrase"], home, nil).status == 0)
            try addItems(home, nil)
            let key = try keyFileKey(home)
            let label = point ?? "not killed"
            if let point {
                let killed = try run(["move-device-key", "--to", "tpm2"], home, tpm, extra: ["KEYSMITH_CRASH_AT": point])
                #expect(killed.status == SIGKILL, "\(point): \(killed)")
                // Killed: every item is still there, opened through whatever holds the key now.
                try expectItems(home, tpm, "killed at \(point)")
                let status = try run(["status"], home, tpm)
                #expect(status.status == 0, "\(point): \(status)")
                if point != "move-sealed" {
                    // Both files (or a zeroed key file): the keychain opens through the TPM, and says how to finish.
                    #expect(status.stdout.contains("TPM 2.0"), "\(point): \(status)")
                    #expect(status.stdout.contains("run 'keysmith move-device-key --to tpm2' again"), "\(point): \(status)")
                    try expectItems(home, tpm, "killed at \(point), KEYSMITH_KEY_STORE=tpm2", extra: ["KEYSMITH_KEY_STORE": "tpm2"])
                }
            }
            let moved = try run(["move-device-key", "--to", "tpm2"], home, tpm)
            #expect(moved.status == 0, "\(label): \(moved)")
            #expect(moved.stdout.contains(point == nil || point == "move-sealed" ? "moved the device key into the TPM" : "finished the interrupted move"), "\(label): \(moved)")
            #expect(!FileManager.default.fileExists(atPath: home.keychain.appendingPathComponent("device.key").path), "\(label)")
            try expectItems(home, tpm, "moved after \(label)")
            try expectItems(home, tpm, "moved after \(label), KEYSMITH_KEY_STORE=tpm2", extra: ["KEYSMITH_KEY_STORE": "tpm2"])
            #expect(try tpmTests.deviceKey(in: home.keychain, tpm: tpm) == key, "the TPM holds the key file's key")
            try expectNoFileHolds(key, in: home, label)
            let status = try run(["status"], home, tpm)
            #expect(status.stdout.contains("device key        TPM 2.0 (\(tpm.tcti)), sealed key \(home.keychain.path)/device.tpm2\n"), "\(status)")
            // Once more: nothing left to do.
            let again = try run(["move-device-key", "--to", "tpm2"], home, tpm)
            #expect(again.status == 0 && again.stdout.contains("in the TPM already"), "\(again)")
        }
    }

    @Test func movedKeyOpensNothingOnAnotherTPMAndTheCommandNamesItsStore() throws {
        let home = TemporaryHome()
        let first = try SoftwareTPM(in: home, name: "first")
        defer { first.stop() }
        let second = try SoftwareTPM(in: home, name: "second")
        defer { second.stop() }
        #expect(try run(["create", "--no-passphrase"], home, nil).status == 0)
        try addItems(home, nil)
        let asTPM = try run(["status"], home, first, extra: ["KEYSMITH_KEY_STORE": "tpm2"])
        #expect(asTPM.status != 0 && asTPM.stderr.contains("keysmith move-device-key --to tpm2"), "\(asTPM)")
        let wrongStore = try run(["move-device-key", "--to", "file"], home, first)
        #expect(wrongStore.status == 2 && wrongStore.stderr.contains("use --to tpm2"), "\(wrongStore)")
        #expect(try run(["move-device-key", "--to", "tpm2"], home, first).status == 0)
        let copy = home.url.appendingPathComponent("copied")
        try FileManager.default.copyItem(at: home.keychain, to: copy)
        let elsewhere = try tpmTests.run(["find-generic-password", "-s", "tpm.move", "-a", "d", "-w"], home, second, keychain: copy)
        #expect(elsewhere.status != 0 && elsewhere.stderr.contains("sealed by another TPM"), "\(elsewhere)")
        #expect(!elsewhere.stdout.contains("class-d-secret"))
        let help = try run(["help"], home, nil)
        #expect(help.stdout.contains("move-device-key") && help.stdout.contains("reseal-device-key"), "\(help)")
    }

    @Test func statusAfterAPCRChangeShowsWhatItCanAndNamesTheRecovery() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "status-pcr")
        defer { tpm.stop() }
        defer { _ = try? run(["lock", "--all"], home, tpm) }
        let created = try run(["create", "--stdin", "--key-store", "tpm2"], home, tpm, standardInput: "right horse\n", extra: ["KEYSMITH_TPM2_PCRS": "16"])
        #expect(created.status == 0, "\(created)")
        try addItems(home, tpm)
        try tpmTests.extendPCR16(tpm)
        let status = try run(["status"], home, tpm)
        #expect(status.status != 0, "\(status)")
        #expect(status.stdout.contains("keychain ") && status.stdout.contains("device key        TPM 2.0"), "\(status)")
        #expect(status.stdout.contains("items             cannot be counted now"), "\(status)")
        #expect(status.stderr.contains("PCR 16 no longer holds the value"), "\(status)")
        #expect(status.stderr.contains("'keysmith reseal-device-key'"), "\(status)")
    }

    @Test func pcrBoundKeyIsSealedAgainOnceThePassphraseProvesTheUser() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "reseal")
        defer { tpm.stop() }
        defer { _ = try? run(["lock", "--all"], home, tpm) }
        let pcr = ["KEYSMITH_TPM2_PCRS": "16"]
        let created = try run(["create", "--stdin", "--key-store", "tpm2"], home, tpm, standardInput: "right horse\n", extra: pcr)
        #expect(created.status == 0, "\(created)")
        try addItems(home, tpm)
        let recoverySeal = home.keychain.appendingPathComponent("device.recovery.tpm2")
        #expect(FileManager.default.fileExists(atPath: recoverySeal.path))
        let key = try tpmTests.deviceKey(in: home.keychain, tpm: tpm)
        try expectNoFileHolds(key, in: home, "with the recovery seal")

        try tpmTests.extendPCR16(tpm)
        let refused = try run(["find-generic-password", "-s", "tpm.move", "-a", "d", "-w"], home, tpm)
        #expect(refused.status != 0 && !refused.stdout.contains("class-d"), "\(refused)")
        #expect(refused.stderr.contains("PCR 16 no longer holds the value"), "\(refused)")
        #expect(refused.stderr.contains("'keysmith reseal-device-key'"), "\(refused)")

        let sealedBefore = try Data(contentsOf: home.keychain.appendingPathComponent("device.tpm2"))
        let wrong = try run(["reseal-device-key", "--stdin"], home, tpm, standardInput: "wrong horse\n")
        #expect(wrong.status != 0, "\(wrong)")
        #expect(wrong.stderr.contains("keychain passphrase") && wrong.stderr.contains("is wrong"), "\(wrong)")
        #expect(wrong.stderr.contains("lockout"), "\(wrong)")
        #expect(try Data(contentsOf: home.keychain.appendingPathComponent("device.tpm2")) == sealedBefore, "a wrong passphrase changed the sealed key")
        #expect(try run(["find-generic-password", "-s", "tpm.move", "-a", "d", "-w"], home, tpm).status != 0)

        // Killed after sealing, before the new sealed key replaced the old one: still refused, nothing lost.
        let killed = try run(["reseal-device-key", "--stdin"], home, tpm, standardInput: "right horse\n", extra: ["KEYSMITH_CRASH_AT": "reseal-sealed"])
        #expect(killed.status == SIGKILL, "\(killed)")
        #expect(try Data(contentsOf: home.keychain.appendingPathComponent("device.tpm2")) == sealedBefore)
        let resealed = try run(["reseal-device-key", "--stdin"], home, tpm, standardInput: "right horse\n")
        #expect(resealed.status == 0 && resealed.stdout.contains("current values of PCR 16"), "\(resealed)")
        try expectItems(home, tpm, "sealed again")
        let status = try run(["status"], home, tpm)
        #expect(status.stdout.contains("bound to PCR 16 (the passphrase can seal it again"), "\(status)")

        // A passphrase change seals the recovery seal again: the old passphrase no longer opens it.
        #expect(try run(["passwd", "--stdin"], home, tpm, standardInput: "right horse\nbattery staple\n").status == 0)
        try tpmTests.extendPCR16(tpm)
        let old = try run(["reseal-device-key", "--stdin"], home, tpm, standardInput: "right horse\n")
        #expect(old.status != 0 && old.stderr.contains("is wrong"), "\(old)")
        #expect(try run(["reseal-device-key", "--stdin"], home, tpm, standardInput: "battery staple\n").status == 0)
        try expectItems(home, tpm, "after the passphrase change and a second PCR change")
        // Without a passphrase there is nothing for it to open: it goes.
        #expect(try run(["passwd", "--remove", "--stdin"], home, tpm, standardInput: "battery staple\n").status == 0)
        #expect(!FileManager.default.fileExists(atPath: recoverySeal.path))
        let none = try run(["reseal-device-key", "--stdin"], home, tpm, standardInput: "battery staple\n")
        #expect(none.status != 0 && none.stderr.contains("no TPM recovery seal"), "\(none)")
    }

    @Test func moveWithPCRBindingMakesTheRecoverySealAndAWrongPassphraseMovesNothing() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "movepcr")
        defer { tpm.stop() }
        defer { _ = try? run(["lock", "--all"], home, tpm) }
        #expect(try run(["create", "--stdin"], home, nil, standardInput: "right horse\n").status == 0)
        try addItems(home, nil)
        let pcr = ["KEYSMITH_TPM2_PCRS": "16"]
        let wrong = try run(["move-device-key", "--to", "tpm2", "--stdin"], home, tpm, standardInput: "wrong horse\n", extra: pcr)
        #expect(wrong.status != 0 && wrong.stderr.contains("passphrase is not correct"), "\(wrong)")
        #expect(FileManager.default.fileExists(atPath: home.keychain.appendingPathComponent("device.key").path))
        #expect(!FileManager.default.fileExists(atPath: home.keychain.appendingPathComponent("device.tpm2").path))

        let killed = try run(["move-device-key", "--to", "tpm2", "--stdin"], home, tpm, standardInput: "right horse\n",
                             extra: pcr.merging(["KEYSMITH_CRASH_AT": "move-recovery-sealed"]) { $1 })
        #expect(killed.status == SIGKILL, "\(killed)")
        try expectItems(home, tpm, "killed after the recovery seal")
        let moved = try run(["move-device-key", "--to", "tpm2", "--stdin"], home, tpm, standardInput: "right horse\n", extra: pcr)
        #expect(moved.status == 0, "\(moved)")
        #expect(FileManager.default.fileExists(atPath: home.keychain.appendingPathComponent("device.recovery.tpm2").path))
        try tpmTests.extendPCR16(tpm)
        #expect(try run(["find-generic-password", "-s", "tpm.move", "-a", "d", "-w"], home, tpm).status != 0)
        #expect(try run(["reseal-device-key", "--stdin"], home, tpm, standardInput: "right horse\n").status == 0)
        try expectItems(home, tpm, "moved, then sealed again")
    }

    @Test func tpmPINIsNeededForEveryOpenAndAWrongOneCountsTowardsLockout() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "pin")
        defer { tpm.stop() }
        let pin = ["KEYSMITH_TPM2_PIN": "4711"]
        let fileStore = try run(["create", "--no-passphrase", "--tpm-pin"], home, tpm, extra: pin)
        #expect(fileStore.status == 2 && fileStore.stderr.contains("--tpm-pin needs the TPM key store"), "\(fileStore)")
        let noTerminal = try run(["create", "--no-passphrase", "--key-store", "tpm2", "--tpm-pin"], home, tpm)
        #expect(noTerminal.status != 0 && noTerminal.stderr.contains("no terminal"), "\(noTerminal)")
        #expect(!FileManager.default.fileExists(atPath: home.keychain.appendingPathComponent("device.tpm2").path))
        let created = try run(["create", "--no-passphrase", "--key-store", "tpm2", "--tpm-pin"], home, tpm, extra: pin)
        #expect(created.status == 0, "\(created)")
        for (account, accessibility, secret) in Self.items.prefix(1) {
            #expect(try run(["add-generic-password", "-s", "tpm.pin", "-a", account, "--stdin", "--accessible", accessibility],
                            home, tpm, standardInput: secret + "\n", extra: pin).status == 0)
        }
        let read = try run(["find-generic-password", "-s", "tpm.pin", "-a", "d", "-w"], home, tpm, extra: pin)
        #expect(read.stdout == "class-d-secret\n", "\(read)")
        let status = try run(["status"], home, tpm, extra: pin)
        #expect(status.stdout.contains("with a TPM PIN"), "\(status)")

        let without = try run(["find-generic-password", "-s", "tpm.pin", "-a", "d", "-w"], home, tpm)
        #expect(without.status != 0 && without.stderr.contains("sealed with a TPM PIN"), "\(without)")
        #expect(without.stderr.contains("KEYSMITH_TPM2_PIN"), "\(without)")
        #expect(try lockoutCounter(tpm) == 0)
        let wrong = try run(["find-generic-password", "-s", "tpm.pin", "-a", "d", "-w"], home, tpm, extra: ["KEYSMITH_TPM2_PIN": "1234"])
        #expect(wrong.status != 0 && !wrong.stdout.contains("class-d"), "\(wrong)")
        #expect(wrong.stderr.contains("TPM PIN") && wrong.stderr.contains("is wrong") && wrong.stderr.contains("lockout"), "\(wrong)")
        // The sealed object is under dictionary-attack protection (not noDA): the TPM counted it.
        #expect(try lockoutCounter(tpm) == 1)
        #expect(try run(["find-generic-password", "-s", "tpm.pin", "-a", "d", "-w"], home, tpm, extra: pin).stdout == "class-d-secret\n")
        // swtpm allows three failures (TPM2_PT_MAX_AUTH_FAIL): then even the right PIN is refused, and the error says why.
        for _ in 0..<2 {
            #expect(try run(["find-generic-password", "-s", "tpm.pin", "-a", "d", "-w"], home, tpm, extra: ["KEYSMITH_TPM2_PIN": "0000"]).status != 0)
        }
        let locked = try run(["find-generic-password", "-s", "tpm.pin", "-a", "d", "-w"], home, tpm, extra: pin)
        #expect(locked.status != 0 && !locked.stdout.contains("class-d"), "\(locked)")
        #expect(locked.stderr.contains("dictionary-attack lockout") && locked.stderr.contains("tpm2_dictionarylockout --clear-lockout"), "\(locked)")
        // Deleting the keychain removes its sealed key too.
        #expect(try run(["delete-keychain"], home, tpm).status == 0)
        #expect(!FileManager.default.fileExists(atPath: home.keychain.appendingPathComponent("device.tpm2").path))
    }

    @Test func pinAndPCRsTogetherNeedBothAndTheResealKeepsThePIN() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "pinpcr")
        defer { tpm.stop() }
        defer { _ = try? run(["lock", "--all"], home, tpm) }
        let pin = ["KEYSMITH_TPM2_PIN": "2468"]
        let created = try run(["create", "--stdin", "--key-store", "tpm2", "--tpm-pin"], home, tpm, standardInput: "right horse\n",
                              extra: pin.merging(["KEYSMITH_TPM2_PCRS": "16"]) { $1 })
        #expect(created.status == 0, "\(created)")
        #expect(try run(["add-generic-password", "-s", "tpm.both", "-a", "d", "--stdin", "--accessible", "always"], home, tpm,
                        standardInput: "both-bound\n", extra: pin).status == 0)
        #expect(try run(["find-generic-password", "-s", "tpm.both", "-a", "d", "-w"], home, tpm, extra: pin).stdout == "both-bound\n")
        let wrongPIN = try run(["find-generic-password", "-s", "tpm.both", "-a", "d", "-w"], home, tpm, extra: ["KEYSMITH_TPM2_PIN": "1357"])
        #expect(wrongPIN.status != 0 && wrongPIN.stderr.contains("TPM PIN") && wrongPIN.stderr.contains("is wrong"), "\(wrongPIN)")

        try tpmTests.extendPCR16(tpm)
        let refused = try run(["find-generic-password", "-s", "tpm.both", "-a", "d", "-w"], home, tpm, extra: pin)
        #expect(refused.status != 0 && refused.stderr.contains("PCR 16 no longer holds the value"), "\(refused)")
        let noPIN = try run(["reseal-device-key", "--stdin"], home, tpm, standardInput: "right horse\n")
        #expect(noPIN.status != 0 && noPIN.stderr.contains("needs the PIN too"), "\(noPIN)")
        #expect(try run(["reseal-device-key", "--stdin"], home, tpm, standardInput: "right horse\n", extra: pin).status == 0)
        #expect(try run(["find-generic-password", "-s", "tpm.both", "-a", "d", "-w"], home, tpm, extra: pin).stdout == "both-bound\n")
        // Sealed again with the PIN: without it, still nothing.
        let without = try run(["find-generic-password", "-s", "tpm.both", "-a", "d", "-w"], home, tpm)
        #expect(without.status != 0 && without.stderr.contains("sealed with a TPM PIN"), "\(without)")
    }

    /// TPM2_PT_LOCKOUT_COUNTER, read from outside with tpm2-tools.
    func lockoutCounter(_ tpm: SoftwareTPM) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tpm2_getcap")
        process.arguments = ["-T", tpm.tcti, "properties-variable"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        try waitForExit(process, seconds: 60)
        // "TPM2_PT_LOCKOUT_COUNTER: 0x0"
        let line = try #require(output.split(separator: "\n").first { $0.contains("TPM2_PT_LOCKOUT_COUNTER") }, "\(output)")
        let value = try #require(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces))
        return try #require(Int(value.hasPrefix("0x") ? String(value.dropFirst(2)) : value, radix: value.hasPrefix("0x") ? 16 : 10), "\(line)")
    }
}
#endif
