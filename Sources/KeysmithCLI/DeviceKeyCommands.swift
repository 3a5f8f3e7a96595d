import Foundation
import KeychainServices
#if canImport(Glibc)
import Glibc
#endif

// The device key commands: moving the key file into the TPM, and sealing a PCR-bound key
// again after a firmware or boot change.

#if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
/// The device key commands (Linux: the TPM key store).
enum DeviceKeyCommands {
    static let all: [Command] = [moveDeviceKeyCommand, resealDeviceKeyCommand]

    /// Commands that never open an existing keychain's device key.
    private static let openNoKey = ["help", "demo", "create", "delete-keychain"]

    /// Before a command runs: for a keychain whose device key is sealed with a TPM PIN and no
    /// PIN given (KEYSMITH_TPM2_PIN), asks for it on the terminal. Without a terminal the
    /// command goes on, and the keychain's open says the PIN is needed.
    static func askForTPMPINIfNeeded(_ command: Command) {
        guard !openNoKey.contains(where: { Array($0.utf8) == Array(command.name.utf8) }), !KeychainEnvironment.tpmPINIsGiven,
            KeychainEnvironment.deviceKeyNeedsTPMPIN
        else { return }
        guard var pin = try? TerminalPrompt.read(promptText: "TPM PIN: ", confirmText: nil) else { return }
        defer { pin.resetBytes(in: 0..<pin.count) }
        KeychainEnvironment.useTPMPIN(String(decoding: pin, as: UTF8.self))
    }
}

/// Warns when a TPM PIN or the recovery seal is guarded by a lockout any program may reset
/// (``KeychainEnvironment/tpmLockoutWarning``).
func warnAboutTPMLockout(_ invocation: CommandInvocation) {
    if let warning = (try? withKeychain(invocation) { KeychainEnvironment.tpmLockoutWarning }) ?? nil {
        invocation.output.warning(warning)
    }
}

let tpmPINOption = OptionSpec(
    name: "tpm-pin", long: "tpm-pin",
    help: "Seal the device key with a TPM PIN too (asked for twice, or KEYSMITH_TPM2_PIN); every open then needs it.")

/// Asks for a new TPM PIN (twice, without echo) unless KEYSMITH_TPM2_PIN gives it.
func askForNewTPMPIN() throws(CommandLineError) {
    if KeychainEnvironment.tpmPINIsGiven { return }
    var pin = try TerminalPrompt.read(promptText: "new TPM PIN: ", confirmText: "again: ")
    defer { pin.resetBytes(in: 0..<pin.count) }
    KeychainEnvironment.useTPMPIN(String(decoding: pin, as: UTF8.self))
}

private let moveDeviceKeyCommand = Command(
    name: "move-device-key", group: .keychain, synopsis: "--to tpm2 [--tpm-pin] [--stdin]",
    summary: "Move the keychain's device key from its key file into the TPM, and erase the file",
    details: """
        Seals the keychain's device key (device.key) by this machine's TPM 2.0 (KEYSMITH_TPM2_TCTI, default device:/dev/tpmrm0), checks that the TPM gives the same key back, stores the sealed blob as device.tpm2, and erases device.key (overwritten with zeros, synced, removed). From then on the keychain opens only with this machine's TPM, as one created with 'keysmith create --key-store tpm2': a copy of its directory opens nothing elsewhere, class D items included. Later commands find the TPM by themselves (KEYSMITH_KEY_STORE unset or tpm2).

        KEYSMITH_TPM2_PCRS=7 (or a list, 0,7) also binds the key to those PCRs; a keychain with a passphrase then asks for it (once, or one line of standard input with --stdin), to make the recovery seal that lets 'keysmith reseal-device-key' seal the key again after a firmware update. --tpm-pin (or KEYSMITH_TPM2_PIN) also seals it with a TPM PIN, which every open then needs.

        Every step can be interrupted (a crash, a power cut) without losing an item: the key file is erased only after the sealed key is in place and checked, and a keychain holding both opens through the TPM. Run the command again to finish an interrupted move. The overwrite cannot reach older copies of the file that the file system, its snapshots or backups may keep.

        Examples:

          keysmith move-device-key --to tpm2
          KEYSMITH_TPM2_PCRS=7 keysmith move-device-key --to tpm2
        """,
    options: [
        OptionSpec(name: "to", long: "to", value: .required("STORE"), help: "Where the key goes: tpm2 (the only choice)."),
        tpmPINOption, stdinOption,
    ]
) { invocation throws(CommandLineError) in
    guard let store = invocation.arguments.value("to") else { throw invocation.usageError("--to tpm2 is required") }
    guard Array(store.utf8) == Array("tpm2".utf8) else {
        throw invocation.usageError("--to \(store) is not a store the key can be moved to; use --to tpm2")
    }
    let directory = invocation.settings.keychainDirectory ?? KeychainEnvironment.current.directory
    guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("keychain.db").path) else { throw noKeychain(directory) }
    // The key is found where the keychain's files say (device.key, or device.tpm2 after an
    // interrupted move), whatever KEYSMITH_KEY_STORE asks for.
    unsetenv("KEYSMITH_KEY_STORE")
    let needsPassphrase = try withKeychain(invocation) { try KeychainEnvironment.deviceKeyMoveNeedsPassphrase }
    if invocation.arguments.contains("tpm-pin") { try askForNewTPMPIN() }
    let passphrase = needsPassphrase ? try readPassphrases(invocation, prompts: [("keychain passphrase: ", false)])[0] : nil
    let outcome = try withKeychain(invocation) { try KeychainEnvironment.moveDeviceKeyToTPM(passphrase: passphrase) }
    warnAboutTPMLockout(invocation)
    switch outcome {
    case .moved: invocation.output.info("moved the device key into the TPM (\(directory.path)/device.tpm2) and erased device.key")
    case .finished: invocation.output.info("finished the interrupted move: the device key is in the TPM, and device.key is erased")
    case .alreadyInTPM: invocation.output.info("the device key is in the TPM already; there is no key file to erase")
    }
}

private let resealDeviceKeyCommand = Command(
    name: "reseal-device-key", group: .keychain, synopsis: "[--stdin]",
    summary: "Seal the TPM-held device key again to the current PCRs, after the passphrase proves the user",
    details: """
        After a firmware update or a change of boot loader or boot configuration, a keychain whose device key is bound to PCRs (KEYSMITH_TPM2_PCRS) does not open: the TPM refuses to unseal the key. If you made the change, this command asks for the keychain passphrase, opens with it the recovery seal made with the passphrase (the TPM checks it), and seals the key again to the PCRs' current values. A wrong passphrase changes nothing, but the TPM counts it towards its dictionary-attack lockout.

        The recovery seal exists for keychains with a passphrase whose key is bound to PCRs (made at creation, by 'keysmith move-device-key', and renewed by 'keysmith passwd'). A keychain without one recovers through an export: 'keysmith export' under the old configuration, or an earlier export, imported into a new keychain.

        Examples:

          keysmith reseal-device-key
          printf '%s\\n' "$PASSPHRASE" | keysmith reseal-device-key --stdin
        """,
    options: [stdinOption]
) { invocation throws(CommandLineError) in
    let directory = invocation.settings.keychainDirectory ?? KeychainEnvironment.current.directory
    guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("keychain.db").path) else { throw noKeychain(directory) }
    let passphrase = try readPassphrases(invocation, prompts: [("keychain passphrase: ", false)])[0]
    let pcrs = try withKeychain(invocation) { try KeychainEnvironment.resealDeviceKey(passphrase: passphrase) }
    invocation.output.info("sealed the device key again to the current values of PCR \(pcrs)")
}
#endif
