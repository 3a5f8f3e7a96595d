#if os(Linux)
import CLoadOnUse
import Foundation
import Testing

@testable import KeychainServices

/// The TPM key store from an attacker's side and a newcomer's: a copied directory with the
/// passphrase on another TPM, sealed key files swapped between keychains of one TPM, a key
/// file changed while a move is under way, and the help that names the TPM variables.
@Suite(.enabled(if: SoftwareTPM.isInstalled, "swtpm is not installed (make deps installs it)"))
struct TPM2DeviceKeyAttackTests {
    let moveTests = TPM2DeviceKeyMoveTests()

    func run(_ arguments: [String], _ home: TemporaryHome, _ tpm: SoftwareTPM?, keychain: URL? = nil, standardInput: String? = nil,
             extra: [String: String] = [:]) throws -> RunResult {
        try TPM2KeyStoreTests().run(
            arguments, home, tpm, keychain: keychain, standardInput: standardInput,
            extra: TPM2DeviceKeyMoveTests.fast.merging(extra) { $1 })
    }

    @Test func finishingAMoveErasesOnlyAKeyFileThatStillHoldsTheMovedKey() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "changed")
        defer { tpm.stop() }
        #expect(try run(["create", "--no-passphrase"], home, nil).status == 0)
        try moveTests.addItems(home, nil)
        let killed = try run(["move-device-key", "--to", "tpm2"], home, tpm, extra: ["KEYSMITH_CRASH_AT": "move-installed"])
        #expect(killed.status == SIGKILL, "\(killed)")
        // Both files are there; the key file is then changed (not a key file Keysmith can read).
        let keyFile = home.keychain.appendingPathComponent("device.key")
        let changed = Data("KSDEVK01 this is not the key that was moved, keep me".utf8)
        try changed.write(to: keyFile)
        #expect(chmod(keyFile.path, 0o600) == 0)
        let again = try run(["move-device-key", "--to", "tpm2"], home, tpm)
        #expect(again.status != 0, "a changed key file was erased: \(again)")
        #expect(again.stderr.contains("device.key") && again.stderr.contains("not erased"), "\(again)")
        #expect(try Data(contentsOf: keyFile) == changed, "the changed key file was overwritten")
        // The keychain still opens through the TPM.
        try moveTests.expectItems(home, tpm, "after the refused erase")
    }

    @Test func copiedPCRBoundKeychainAndItsPassphraseOpenNothingOnAnotherTPM() throws {
        let home = TemporaryHome()
        let first = try SoftwareTPM(in: home, name: "origin")
        defer { first.stop() }
        let second = try SoftwareTPM(in: home, name: "thief")
        defer { second.stop() }
        defer { _ = try? run(["lock", "--all"], home, first) }
        let created = try run(["create", "--stdin", "--key-store", "tpm2"], home, first, standardInput: "right horse\n",
                              extra: ["KEYSMITH_TPM2_PCRS": "16"])
        #expect(created.status == 0, "\(created)")
        try moveTests.addItems(home, first)
        let copy = home.url.appendingPathComponent("stolen")
        try FileManager.default.copyItem(at: home.keychain, to: copy)
        let sealedBefore = try Data(contentsOf: copy.appendingPathComponent("device.tpm2"))
        // The recovery seal, opened with the right passphrase, on another TPM: refused, nothing changed.
        let reseal = try run(["reseal-device-key", "--stdin"], home, second, keychain: copy, standardInput: "right horse\n")
        #expect(reseal.status != 0 && reseal.stderr.contains("sealed by another TPM"), "\(reseal)")
        #expect(try Data(contentsOf: copy.appendingPathComponent("device.tpm2")) == sealedBefore)
        let unlock = try run(["unlock", "--stdin"], home, second, keychain: copy, standardInput: "right horse\n")
        #expect(unlock.status != 0, "\(unlock)")
        for account in ["a", "c", "d"] {
            let read = try run(["find-generic-password", "-s", "tpm.move", "-a", account, "-w"], home, second, keychain: copy)
            #expect(read.status != 0 && !read.stdout.contains("secret"), "\(account): \(read)")
        }
    }

    @Test func sealedKeyFilesSwappedBetweenKeychainsOfOneTPMAreRefusedAndNamed() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "swap")
        defer { tpm.stop() }
        defer { _ = try? run(["lock", "--all"], home, tpm) }
        let pcr = ["KEYSMITH_TPM2_PCRS": "16"]
        let other = home.url.appendingPathComponent("other")
        #expect(try run(["create", "--stdin", "--key-store", "tpm2"], home, tpm, standardInput: "same words\n", extra: pcr).status == 0)
        #expect(try run(["create", "--stdin", "--key-store", "tpm2"], home, tpm, keychain: other, standardInput: "same words\n", extra: pcr).status == 0)
        try moveTests.addItems(home, tpm)
        let mine = home.keychain
        let sealed = mine.appendingPathComponent("device.tpm2")
        let recovery = mine.appendingPathComponent("device.recovery.tpm2")
        let ownSealed = try Data(contentsOf: sealed)

        // The other keychain's recovery seal (same passphrase, same TPM) does not reseal this one.
        try FileManager.default.removeItem(at: recovery)
        try FileManager.default.copyItem(at: other.appendingPathComponent("device.recovery.tpm2"), to: recovery)
        try TPM2KeyStoreTests().extendPCR16(tpm)
        let reseal = try run(["reseal-device-key", "--stdin"], home, tpm, standardInput: "same words\n")
        #expect(reseal.status != 0 && reseal.stderr.contains("does not belong to the keychain"), "\(reseal)")
        #expect(try Data(contentsOf: sealed) == ownSealed, "a foreign recovery seal replaced the sealed key")

        // The other keychain's sealed key, after both are sealed again: refused, and the message names the TPM-sealed key.
        #expect(try run(["reseal-device-key", "--stdin"], home, tpm, keychain: other, standardInput: "same words\n").status == 0)
        try FileManager.default.removeItem(at: sealed)
        try FileManager.default.copyItem(at: other.appendingPathComponent("device.tpm2"), to: sealed)
        let read = try run(["find-generic-password", "-s", "tpm.move", "-a", "d", "-w"], home, tpm)
        #expect(read.status != 0 && !read.stdout.contains("secret"), "\(read)")
        #expect(read.stderr.contains("device.tpm2"), "the error does not name the TPM-sealed key: \(read)")
        #expect(!read.stderr.contains("(device.key in the same directory)"), "the error sends a TPM keychain's user to device.key: \(read)")
    }

    /// Runs a tpm2-tools program against `tpm`.
    func tpm2Tool(_ name: String, _ arguments: [String], _ tpm: SoftwareTPM) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/" + name)
        process.arguments = ["-T", tpm.tcti] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try waitForExit(process, seconds: 60)
        return process.terminationStatus
    }

    /// A TPM PIN and the recovery seal are guarded only by the TPM's lockout; while the
    /// lockout hierarchy has no authorization value (swtpm's state, and most machines'), any
    /// program that may use the TPM resets the counter (shown here with tpm2-tools), so the
    /// commands that make them say so, with the fix.
    @Test func pinAndRecoverySealWarnWhileAnyProgramMayResetTheTPMLockout() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "lockout")
        defer { tpm.stop() }
        defer { _ = try? run(["lock", "--all"], home, tpm) }
        let pin = ["KEYSMITH_TPM2_PIN": "4711"]
        #expect(try run(["create", "--no-passphrase", "--key-store", "tpm2", "--tpm-pin"], home, tpm, extra: pin).status == 0)
        for _ in 0..<3 {
            #expect(try run(["find-generic-password", "-s", "x", "-a", "y"], home, tpm, extra: ["KEYSMITH_TPM2_PIN": "0000"]).status != 0)
        }
        let locked = try run(["find-generic-password", "-s", "x", "-a", "y"], home, tpm, extra: pin)
        #expect(locked.stderr.contains("dictionary-attack lockout"), "\(locked)")
        // The reset needs no secret while the lockout hierarchy has none: the guesses start again.
        #expect(try tpm2Tool("tpm2_dictionarylockout", ["--clear-lockout"], tpm) == 0)
        let reset = try run(["find-generic-password", "-s", "x", "-a", "y"], home, tpm, extra: pin)
        #expect(!reset.stderr.contains("lockout"), "\(reset)")

        let withPIN = try run(["create", "--no-passphrase", "--key-store", "tpm2", "--tpm-pin"], home, tpm,
                              keychain: home.url.appendingPathComponent("pin"), extra: pin)
        #expect(withPIN.status == 0, "\(withPIN)")
        #expect(withPIN.stderr.contains("lockout") && withPIN.stderr.contains("tpm2_changeauth -c lockout"), "\(withPIN)")
        let recovery = try run(["create", "--stdin", "--key-store", "tpm2"], home, tpm, keychain: home.url.appendingPathComponent("pcr"),
                               standardInput: "right horse\n", extra: ["KEYSMITH_TPM2_PCRS": "16"])
        #expect(recovery.status == 0, "\(recovery)")
        #expect(recovery.stderr.contains("tpm2_changeauth -c lockout"), "\(recovery)")
        let plain = try run(["create", "--no-passphrase", "--key-store", "tpm2"], home, tpm, keychain: home.url.appendingPathComponent("plain"))
        #expect(plain.status == 0 && !plain.stderr.contains("lockout"), "nothing to guess, nothing to warn about: \(plain)")

        // With a lockout authorization value, the counter holds and nothing is said.
        #expect(try tpm2Tool("tpm2_changeauth", ["-c", "lockout", "lockout-secret"], tpm) == 0)
        let guarded = try run(["create", "--no-passphrase", "--key-store", "tpm2", "--tpm-pin"], home, tpm,
                              keychain: home.url.appendingPathComponent("guarded"), extra: pin)
        #expect(guarded.status == 0 && !guarded.stderr.contains("lockout"), "\(guarded)")
    }

    /// With a TPM PIN and PCRs, the recovery seal must not open with the passphrase alone:
    /// else whoever learns the passphrase gets round the PIN. What such an attacker computes
    /// (the passphrase's value alone, as a recovery seal without a PIN uses) is refused by
    /// the TPM; the PIN and the passphrase together reseal (the CLI test of the reseal).
    @Test func recoverySealOfAPINSealedKeyNeedsThePINToo() throws {
        let home = TemporaryHome()
        let tpm = try SoftwareTPM(in: home, name: "pinrecovery")
        defer { tpm.stop() }
        defer { _ = try? run(["lock", "--all"], home, tpm) }
        let pin = ["KEYSMITH_TPM2_PIN": "2468"]
        let created = try run(["create", "--stdin", "--key-store", "tpm2", "--tpm-pin"], home, tpm, standardInput: "right horse\n",
                              extra: pin.merging(["KEYSMITH_TPM2_PCRS": "16"]) { $1 })
        #expect(created.status == 0, "\(created)")
        let sealed = home.keychain.appendingPathComponent("device.tpm2")
        let recovery = home.keychain.appendingPathComponent("device.recovery.tpm2")
        var bytes = [UInt8](try Data(contentsOf: recovery))
        bytes.replaceSubrange(0..<8, with: Array("KSTPMR01".utf8))
        try Data(bytes).write(to: recovery)
        #expect(chmod(recovery.path, 0o600) == 0)
        let variables = ["KEYSMITH_TPM2_TCTI": tpm.tcti]
        #expect(throws: KeychainFailure.self, "the passphrase alone opened the recovery seal of a PIN-sealed key") {
            _ = try TPM2RecoverySeal.recover(sealedKeyFile: sealed, passphrase: "right horse", variables: variables)
        }
    }

    @Test func helpNamesTheKeyStoreAndTPMVariables() throws {
        let home = TemporaryHome()
        let help = try run(["help"], home, nil)
        for name in ["KEYSMITH_KEY_STORE", "KEYSMITH_TPM2_TCTI", "KEYSMITH_TPM2_PCRS", "KEYSMITH_TPM2_PIN"] {
            #expect(help.stdout.contains(name), "keysmith help does not name \(name)")
        }
    }
}
#endif
