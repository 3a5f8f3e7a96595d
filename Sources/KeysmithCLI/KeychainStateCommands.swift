import Foundation
import KeychainServices
#if canImport(Glibc)
import Glibc
#endif

// The keychain state commands: create, unlock, lock, passwd, status, export, import. Passphrases come from
// a prompt without echo or from standard input (--stdin), never from the command line.

/// The keychain state commands (Linux: where keysmith runs its own keychain).
public enum KeychainStateCommands {
    /// Every keychain state command, in help order.
    public static let all: [Command] = {
        #if canImport(Security) || KEYSMITH_APPLE_SURFACE
        return []
        #else
        return [createCommand, unlockCommand, lockCommand, passwdCommand, statusCommand, exportCommand, importCommand, deleteKeychainCommand]
            + DeviceKeyCommands.all
        #endif
    }()
}

#if !canImport(Security) && !KEYSMITH_APPLE_SURFACE
let stdinOption = OptionSpec(
    name: "stdin", long: "stdin",
    help: "Read the passphrase from standard input instead of prompting (one line per passphrase asked for).")

/// The option names under which macOS's keychain commands hand on a passphrase given on
/// their command line (`-p`, `-o`); no command line can give them directly.
enum GivenPassphrase {
    /// The current passphrase (unlock-keychain -p, set-keychain-password -o).
    static let current = "given-current-passphrase"
    /// The new passphrase (create-keychain -p, set-keychain-password -p).
    static let new = "given-new-passphrase"
}

/// Reads `count` passphrases: one prompt each (without echo; new ones asked twice), or
/// `count` lines of standard input with --stdin; those handed on by macOS's keychain
/// commands (``GivenPassphrase``) are taken as given.
func readPassphrases(_ invocation: CommandInvocation, prompts: [(text: String, isNew: Bool)]) throws(CommandLineError) -> [String] {
    let given = prompts.map { invocation.arguments.value($0.isNew ? GivenPassphrase.new : GivenPassphrase.current) }
    guard given.contains(where: { $0 != nil }) else { return try readPassphrasesAsked(invocation, prompts: prompts) }
    var asked = try readPassphrasesAsked(invocation, prompts: zip(prompts, given).filter { $0.1 == nil }.map(\.0))
    asked.reverse()
    return given.map { $0 ?? asked.removeLast() }
}

private func readPassphrasesAsked(_ invocation: CommandInvocation, prompts: [(text: String, isNew: Bool)]) throws(CommandLineError) -> [String] {
    if prompts.isEmpty { return [] }
    if invocation.arguments.contains("stdin") {
        guard var data = invocation.secretInput.readStandardInputToEnd() else {
            throw .failure("standard input could not be read.", recovery: "pipe the passphrase: printf '%s\\n' \"$PASSPHRASE\" | keysmith ... --stdin")
        }
        defer { data.withUnsafeMutableBytes { bytes in for index in bytes.indices { bytes[index] = 0 } } }
        var lines = data.split(separator: 0x0A, omittingEmptySubsequences: false).map { line -> String in
            var line = line
            if line.last == 0x0D { line.removeLast() }
            return String(decoding: line, as: UTF8.self)
        }
        if lines.last == "" { lines.removeLast() }
        guard lines.count >= prompts.count, !lines.prefix(prompts.count).contains(where: \.isEmpty) else {
            throw .failure(
                "standard input holds \(lines.count) passphrase line(s); this command needs \(prompts.count), none empty.",
                recovery: "give one passphrase per line (\(prompts.map(\.text).joined(separator: ", "))).")
        }
        return Array(lines.prefix(prompts.count))
    }
    var result: [String] = []
    for prompt in prompts {
        var data = try TerminalPrompt.read(promptText: prompt.text, confirmText: prompt.isNew ? "again: " : nil)
        defer { data.withUnsafeMutableBytes { bytes in for index in bytes.indices { bytes[index] = 0 } } }
        guard !data.isEmpty else { throw .failure("the passphrase is empty.", recovery: "type a passphrase.") }
        result.append(String(decoding: data, as: UTF8.self))
    }
    return result
}

/// Runs `body` with the invocation's keychain in force, turning failures into exit statuses.
func withKeychain<Result>(_ invocation: CommandInvocation, _ body: () throws -> Result) throws(CommandLineError) -> Result {
    let environment = KeychainEnvironment(
        directory: invocation.settings.keychainDirectory ?? KeychainEnvironment.current.directory,
        accessGroups: invocation.settings.accessGroups)
    do {
        return try KeychainEnvironment.withEnvironment(environment, body)
    } catch let error as KeychainStateError {
        var message = error.reason
        if message.hasSuffix(".") { message.removeLast() }
        message += " (\(error.statusName), \(error.status))."
        throw CommandLineError(.failure, message, recovery: error.recovery, status: error.status)
    } catch let error as CommandLineError {
        throw error
    } catch {
        throw .failure("\(error)")
    }
}

private func stateName(_ state: KeychainLockState) -> String {
    switch state {
    case .beforeFirstUnlock: return "beforeFirstUnlock"
    case .locked: return "locked"
    case .unlocked: return "unlocked"
    }
}

private let createCommand = Command(
    name: "create", group: .keychain, synopsis: "[--no-passphrase | --stdin] [--key-store STORE [--tpm-pin]]",
    summary: "Create the keychain, with a passphrase (prompted, or --stdin) or without one",
    details: """
        Creates the keychain directory and its files. With a passphrase, items accessible only when unlocked (or after the first unlock) need 'keysmith unlock' after a restart or 'keysmith lock'; without one (--no-passphrase) the keychain is always unlocked, as a device without a passcode. A keychain that already exists is left alone.

        The passphrase is asked for twice without echo, or read from standard input with --stdin. It is never stored: it is stretched with Argon2id (3 passes over 128 MiB, about a quarter of a second).

        The device key is kept where KEYSMITH_KEY_STORE (or --key-store) says: 'file' (device.key beside the database), 'tpm2' (sealed by this machine's TPM 2.0, reached through KEYSMITH_TPM2_TCTI, default device:/dev/tpmrm0; only the sealed blob device.tpm2 is stored, and it opens nothing on another machine; KEYSMITH_TPM2_PCRS=7 also binds it to PCR 7), 'systemd-credential', or 'auto' (the default). Later commands find the store the keychain was created with. A keychain with a passphrase whose key is bound to PCRs also gets a recovery seal, which 'keysmith reseal-device-key' opens with the passphrase after a firmware or boot change.

        With --tpm-pin (tpm2 only), the TPM also requires a PIN, asked for twice without echo (or taken from KEYSMITH_TPM2_PIN): every later command needs it (asked for on the terminal, or KEYSMITH_TPM2_PIN). The TPM checks it, and after a few wrong PINs refuses every PIN for a while (its dictionary-attack lockout).

        Examples:

          keysmith create
          printf '%s\\n' "$PASSPHRASE" | keysmith create --stdin
          keysmith create --no-passphrase
          keysmith create --key-store tpm2
          keysmith create --key-store tpm2 --tpm-pin
        """,
    options: [
        stdinOption, OptionSpec(name: "no-passphrase", long: "no-passphrase", help: "Create the keychain without a passphrase."),
        OptionSpec(name: "key-store", long: "key-store", value: .required("STORE"), help: "Where the device key is kept: auto, file, tpm2 or systemd-credential (as KEYSMITH_KEY_STORE)."),
        tpmPINOption,
    ]
) { invocation throws(CommandLineError) in
    let directory = invocation.settings.keychainDirectory ?? KeychainEnvironment.current.directory
    let exists = FileManager.default.fileExists(atPath: directory.appendingPathComponent("keychain.db").path)
    if exists {
        throw .failure("a keychain already exists in \(directory.path).", recovery: "use 'keysmith passwd' to set or change its passphrase.")
    }
    if let store = invocation.arguments.value("key-store") {
        guard ["auto", "file", "tpm2", "systemd-credential"].contains(where: { Array($0.utf8) == Array(store.utf8) }) else {
            throw invocation.usageError("--key-store \(store) is not a key store; use auto, file, tpm2 or systemd-credential")
        }
        // The keychain is opened below, in this process: the choice reaches it as the variable would.
        setenv("KEYSMITH_KEY_STORE", store, 1)
    }
    if invocation.arguments.contains("tpm-pin") {
        guard let store = ProcessInfo.processInfo.environment["KEYSMITH_KEY_STORE"], Array(store.utf8) == Array("tpm2".utf8) else {
            throw invocation.usageError("--tpm-pin needs the TPM key store (--key-store tpm2)")
        }
        try askForNewTPMPIN()
    }
    if invocation.arguments.contains("no-passphrase") {
        if invocation.arguments.contains("stdin") { throw invocation.usageError("give --no-passphrase or --stdin, not both") }
        // Setting "no passphrase" on a new keychain creates its files, the device key among
        // them: in the key store chosen now, which later commands find by themselves.
        try withKeychain(invocation) { try KeychainEnvironment.createWithoutPassphrase() }
        invocation.output.info("created the keychain in \(directory.path), without a passphrase")
        warnAboutTPMLockout(invocation)
        return
    }
    let passphrase = try readPassphrases(invocation, prompts: [("new keychain passphrase: ", true)])[0]
    let state = try withKeychain(invocation) { () throws -> KeychainLockState in
        try KeychainEnvironment.setPassphrase(passphrase, old: nil)
        return KeychainEnvironment.lockState
    }
    invocation.output.info(
        state == .unlocked
            ? "created the keychain in \(directory.path), with a passphrase; it is unlocked"
            : "created the keychain in \(directory.path), with a passphrase; it is locked (the lock state could not be kept: 'keysmith unlock' says why)")
    warnAboutTPMLockout(invocation)
}

private let unlockCommand = Command(
    name: "unlock", group: .keychain, synopsis: "[--timeout SECONDS] [--stdin]",
    summary: "Unlock the keychain for the user's processes (until lock, or the timeout)",
    details: """
        Checks the passphrase and makes the keychain's protected items usable by every process of this user: items accessible when unlocked until 'keysmith lock' or the timeout, items accessible after the first unlock until 'keysmith lock --all' or a restart. A wrong passphrase changes nothing (exit status 1).

        --timeout SECONDS sets when the keychain locks again by itself (0: never). Default: $KEYSMITH_AUTO_LOCK, else 900 seconds.

        Examples:

          keysmith unlock
          keysmith unlock --timeout 300
          printf '%s\\n' "$PASSPHRASE" | keysmith unlock --stdin
        """,
    options: [OptionSpec(name: "timeout", long: "timeout", value: .required("SECONDS"), help: "Lock again after SECONDS (0: only on 'keysmith lock')."), stdinOption]
) { invocation throws(CommandLineError) in
    var timeout = KeychainEnvironment.defaultAutoLock
    if let text = invocation.arguments.value("timeout") {
        guard let seconds = UInt32(text) else { throw invocation.usageError("--timeout needs a number of seconds, not '\(text)'") }
        timeout = seconds == 0 ? nil : seconds
    }
    // A keychain that cannot be read (refused as rolled back, say) is not one without a
    // passphrase: its error is the answer.
    guard try withKeychain(invocation, { KeychainEnvironment.keychainExists ? try KeychainEnvironment.passphraseIsSet() : false }) else {
        invocation.output.info("the keychain has no passphrase: it is always unlocked")
        return
    }
    let passphrase = try readPassphrases(invocation, prompts: [("keychain passphrase: ", false)])[0]
    try withKeychain(invocation) { try KeychainEnvironment.unlock(passphrase: passphrase, timeout: timeout) }
    invocation.output.info(timeout.map { "unlocked for \($0) seconds" } ?? "unlocked until 'keysmith lock'")
    if KeychainEnvironment.lockStateIsLocalToUserNamespace { invocation.output.info(userNamespaceNote) }
}

private let lockCommand = Command(
    name: "lock", group: .keychain, synopsis: "[--all]",
    summary: "Lock the keychain for the user's processes (--all: as after a restart)",
    details: """
        Makes the items accessible only when unlocked unusable again, in every process of this user. With --all, also the items accessible after the first unlock, as a restart does. A keychain without a passphrase is always unlocked; this changes nothing there.
        """,
    options: [OptionSpec(name: "all", long: "all", help: "Also lock the items accessible after the first unlock.")]
) { invocation throws(CommandLineError) in
    let all = invocation.arguments.contains("all")
    let state = try withKeychain(invocation) { () throws -> KeychainLockState in
        try KeychainEnvironment.lock(evictingFirstUnlock: all)
        return KeychainEnvironment.lockState
    }
    switch state {
    case .beforeFirstUnlock: invocation.output.info("the keychain is locked, as after a restart (also its items accessible after the first unlock)")
    case .locked: invocation.output.info("the keychain is locked")
    case .unlocked: invocation.output.info("the keychain has no passphrase: it is always unlocked")
    }
    if state != .unlocked && KeychainEnvironment.lockStateIsLocalToUserNamespace {
        invocation.output.info(userNamespaceNote)
    }
}

/// Said by lock and unlock in a user namespace other than the machine's first one.
private let userNamespaceNote =
    "only for the processes of this user namespace: the kernel keeps a keyring per user namespace, so processes outside it keep their own lock state (lock or unlock there too)"

private let passwdCommand = Command(
    name: "passwd", group: .keychain, synopsis: "[--remove] [--stdin]",
    summary: "Set, change or remove (--remove) the keychain passphrase",
    details: """
        Sets a passphrase on a keychain without one, or changes it (the current one is asked for first), or removes it with --remove. Each of them replaces the keys the passphrase protects (the class keys of the items accessible when unlocked or after the first unlock, and the key of device-passcode access control) and encrypts those items again under the new keys, in one transaction: an interrupted change leaves the old or the new passphrase in force, and a copy of the keychain from before the change does not open items written after it. Removing the passphrase deletes the items accessible only while a passcode is set (WhenPasscodeSetThisDeviceOnly), and only those. The lock state stays as it was (a locked keychain stays locked); a keychain that gets its first passphrase is unlocked.

        With --stdin, standard input holds one passphrase per line: the current one first (when there is one), then the new one (unless --remove).
        """,
    options: [stdinOption, OptionSpec(name: "remove", long: "remove", help: "Remove the passphrase.")]
) { invocation throws(CommandLineError) in
    let has = try withKeychain(invocation) { KeychainEnvironment.keychainExists ? try KeychainEnvironment.passphraseIsSet() : false }
    let remove = invocation.arguments.contains("remove")
    if remove && !has {
        invocation.output.info("the keychain has no passphrase")
        return
    }
    var prompts: [(text: String, isNew: Bool)] = []
    if has { prompts.append(("current keychain passphrase: ", false)) }
    if !remove { prompts.append(("new keychain passphrase: ", true)) }
    let passphrases = try readPassphrases(invocation, prompts: prompts)
    let old = has ? passphrases[0] : nil
    let new = remove ? nil : passphrases.last
    let state = try withKeychain(invocation) { () throws -> KeychainLockState in
        try KeychainEnvironment.setPassphrase(new, old: old)
        return KeychainEnvironment.lockState
    }
    if remove {
        invocation.output.info("removed the passphrase: the keychain is always unlocked")
    } else {
        switch state {
        case .unlocked: invocation.output.info("the passphrase is set; the keychain is unlocked")
        case .locked: invocation.output.info("the passphrase is set; the keychain stays locked (keysmith unlock to unlock it)")
        case .beforeFirstUnlock: invocation.output.info("the passphrase is set; the keychain stays locked, as after a restart (keysmith unlock to unlock it)")
        }
    }
}

private let deleteKeychainCommand = Command(
    name: "delete-keychain", group: .keychain, synopsis: "",
    summary: "Delete the keychain: its items, its files and its unlock state",
    details: """
        Deletes the keychain's files (database, key file, anchor) and removes its unlock state from the kernel keyring, in every process of this user; the directory too when nothing else is left in it. Its items are gone for good: export them first (keysmith export) to keep them. Removing the directory by hand leaves the unlock state in the kernel keyring until a restart (it is cleared when the user's key quota fills up).
        """,
    options: []
) { invocation throws(CommandLineError) in
    let directory = invocation.settings.keychainDirectory ?? KeychainEnvironment.current.directory
    let deleted = try withKeychain(invocation) { try KeychainEnvironment.deleteKeychain() }
    invocation.output.info(deleted ? "deleted the keychain in \(directory.path)" : "there is no keychain in \(directory.path)")
}

private let statusCommand = Command(
    name: "status", group: .keychain, synopsis: "",
    summary: "Show the lock state, the time left before auto-lock, and item counts per accessibility",
    details: """
        Prints the keychain directory, whether it has a passphrase, its lock state (unlocked, locked, beforeFirstUnlock), when an unlocked keychain locks itself (auto-lock), where the lock state is shared (the user's kernel keyring, or this process only), where the device key is kept, the TPM NV counter that guards against an older copy put back (TPM key store only), and how many items it holds per accessibility (whenUnlocked, afterFirstUnlockThisDeviceOnly, ...). Never prints secrets. On a directory without a keychain it says so, and how to make one (exit status 1).

        With --json: {"keychain", "passphrase", "lockState", "autoLockSeconds" (only while counting down), "lockStateStore", "keyStore", "rollbackCounter": {"nvIndex", "value"} (TPM key store only), "items": {"whenUnlocked": n, ...}}.
        """,
    options: []
) { invocation throws(CommandLineError) in
    let directory = invocation.settings.keychainDirectory ?? KeychainEnvironment.current.directory
    guard try withKeychain(invocation, { KeychainEnvironment.keychainExists }) else { throw noKeychain(directory) }
    let (state, passphrase, timeLeft) = try withKeychain(invocation) {
        (KeychainEnvironment.lockState, KeychainEnvironment.hasPassphrase, KeychainEnvironment.autoLockTimeLeft)
    }
    let (keyStore, nextUnlock) = try withKeychain(invocation) { (KeychainEnvironment.deviceKeyStore, KeychainEnvironment.defaultAutoLock) }
    // Counting opens the keychain, which can fail (a TPM whose PCRs changed, a damaged file): the
    // rest of the status is still shown, then that failure, with its recovery, is the outcome.
    var counts: [String: Int] = [:]
    var openFailure: CommandLineError?
    do throws(CommandLineError) {
        counts = try withKeychain(invocation) { try KeychainEnvironment.itemCountsByAccessibility() }
    } catch {
        if invocation.settings.json { throw error }
        openFailure = error
    }
    let rollbackCounter = openFailure == nil ? try withKeychain(invocation) { KeychainEnvironment.rollbackCounter } : nil
    // Items per accessibility by name (whenUnlocked), not by Apple's code (ak).
    var named: [(name: String, count: Int)] = []
    for (code, count) in counts {
        named.append((Accessibility(code: code)?.name ?? code, count))
    }
    named.sort { $0.name < $1.name }
    if invocation.settings.json {
        var object: [String: Any] = [
            "keychain": directory.path, "passphrase": passphrase, "lockState": stateName(state),
            "lockStateStore": KeychainEnvironment.lockStateStore, "keyStore": keyStore,
            "items": Dictionary(named.map { ($0.name, $0.count) }, uniquingKeysWith: +),
        ]
        if case .seconds(let seconds) = timeLeft { object["autoLockSeconds"] = Int(seconds) }
        if let rollbackCounter { object["rollbackCounter"] = ["nvIndex": rollbackCounter.nvIndex, "value": rollbackCounter.value] }
        invocation.output.printJSON(object)
        return
    }
    let autoLock: String
    switch (passphrase, state, timeLeft) {
    case (false, _, _): autoLock = "none (no passphrase: always unlocked)"
    case (_, .unlocked, .seconds(let seconds)): autoLock = "in \(durationText(seconds)) (set-keychain-settings -t SECONDS sets it for every unlock)"
    case (_, .unlocked, _): autoLock = "never: unlocked until 'keysmith lock'"
    default: autoLock = "locked now; 'keysmith unlock' unlocks it " + (nextUnlock.map { "for \($0) seconds" } ?? "until 'keysmith lock'")
    }
    invocation.output.data("keychain          \(directory.path)")
    invocation.output.data("passphrase        \(passphrase ? "yes" : "no (always unlocked)")")
    invocation.output.data("lock state        \(stateName(state))")
    invocation.output.data("auto-lock         \(autoLock)")
    invocation.output.data("lock state kept   \(KeychainEnvironment.lockStateStore)")
    invocation.output.data("device key        \(keyStore)")
    if let openFailure {
        invocation.output.data("rollback counter  not read: the keychain cannot be opened now (below)")
        invocation.output.data("items             cannot be counted now: the keychain cannot be opened (below)")
        throw openFailure
    }
    if let rollbackCounter {
        invocation.output.data("rollback counter  TPM NV index \(rollbackCounter.nvIndex), at \(rollbackCounter.value) (incremented at most once per ten minutes of writes, and at a passphrase change)")
    } else {
        invocation.output.data("rollback counter  none (only the TPM key store has one; see docs/SECURITY.md, \"Rollback\")")
    }
    invocation.output.data("items             \(named.reduce(0) { $0 + $1.count })")
    let width = max(16, (named.map(\.name.count).max() ?? 0) + 2)
    for (name, count) in named {
        invocation.output.data("  \(name.padding(toLength: width, withPad: " ", startingAt: 0))\(count)")
    }
}

/// The error for a directory that holds no keychain (yet), with the ways to make one.
func noKeychain(_ directory: URL) -> CommandLineError {
    .failure(
        "there is no keychain in \(directory.path) (no keychain.db): nothing has been stored there yet.",
        recovery: "make one with 'keysmith create' (asks for a passphrase) or 'keysmith create --no-passphrase' "
            + "(the first item added also makes one, without a passphrase); or point to an existing one with "
            + "--keychain DIRECTORY or KEYSMITH_HOME.")
}

/// `45 seconds`, `14 minutes`, `2 hours 5 minutes`, for the time left before auto-lock.
func durationText(_ seconds: UInt64) -> String {
    if seconds < 60 { return "\(seconds) second\(seconds == 1 ? "" : "s")" }
    let minutes = seconds / 60
    if minutes < 60 { return "about \(minutes) minute\(minutes == 1 ? "" : "s")" }
    let hours = minutes / 60
    return "about \(hours) hour\(hours == 1 ? "" : "s")" + (minutes % 60 == 0 ? "" : " \(minutes % 60) minutes")
}

private let exportCommand = Command(
    name: "export", group: .keychain, synopsis: "FILE [--stdin]",
    summary: "Write the items to FILE, sealed with a passphrase, and say which stayed here and why",
    details: """
        Writes the generic and internet passwords, keys and certificates of the access groups in force (see --access-group) to FILE: an authenticated archive, encrypted with a key stretched from a passphrase you choose (asked twice without echo, or one line of standard input with --stdin). FILE is created with mode 0600 and must not exist yet.

        Items that stay here, counted in the report by kind: items accessible only on this device (…ThisDeviceOnly, among them SecureStore's default afterFirstUnlockThisDeviceOnly), which never leave it, and items whose access control needs the user (--access-control: user presence, biometry, the passcode), since the archive keeps no access control.

        While the keychain is locked and holds items that need it unlocked, export writes nothing (an archive without them would pass for complete): it counts them, per accessibility, before it asks for the archive passphrase; unlock the keychain and export again.

        Example:

          keysmith export backup.ksarchive
        """,
    options: [stdinOption], positionalNames: ["FILE"]
) { invocation throws(CommandLineError) in
    guard let path = invocation.arguments.positionals.first else { throw invocation.usageError("FILE is required") }
    if FileManager.default.fileExists(atPath: path) {
        throw .failure("\(path) already exists.", recovery: "choose a new file name, or remove the old archive first.")
    }
    let directory = invocation.settings.keychainDirectory ?? KeychainEnvironment.current.directory
    guard try withKeychain(invocation, { KeychainEnvironment.keychainExists }) else { throw noKeychain(directory) }
    // Locked: refused before the archive passphrase is asked for (twice, on a terminal).
    try withKeychain(invocation) { try KeychainArchive.checkReadableForExport() }
    let passphrase = try readPassphrases(invocation, prompts: [("archive passphrase: ", true)])[0]
    let result = try withKeychain(invocation) { try KeychainArchive.export(passphrase: passphrase) }
    let archive = result.archive
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw .failure("cannot create \(path): \(String(cString: strerror(errno))).") }
    let written = archive.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    let synced = fsync(descriptor)
    close(descriptor)
    guard written == archive.count, synced == 0 else {
        unlink(path)
        throw .failure("writing \(path) failed.", recovery: "check free disk space.")
    }
    invocation.output.info("exported \(result.count) item(s) to \(path)")
    let left = result.leftBehind.reduce(0) { $0 + $1.count }
    guard left > 0 else { return }
    invocation.output.info("left behind \(left) item(s), which stay in this keychain:")
    for kind in result.leftBehind {
        let items = kind.count == 1 ? "item" : "items"
        switch kind.reason {
        case .thisDeviceOnly:
            let name = kind.accessibility ?? "ThisDeviceOnly"
            let note = name == "afterFirstUnlockThisDeviceOnly" ? " (SecureStore's default)" : ""
            invocation.output.info("  \(kind.count) \(name) \(items)\(note): ThisDeviceOnly items never leave this machine")
        case .needsUser:
            invocation.output.info(
                "  \(kind.count) \(items) with access control that needs the user (user presence, biometry, passcode): "
                    + "the archive keeps no access control")
        }
    }
}

private let importCommand = Command(
    name: "import", group: .keychain, synopsis: "FILE [--stdin]",
    summary: "Add the items of an archive written by export (items already present are kept)",
    details: """
        Reads FILE (written by 'keysmith export'), checks it with its passphrase (prompted, or one line of standard input with --stdin) and adds its items to this keychain. An item that is already here (same service and account, or server and so on) is left as it is. A wrong passphrase or an altered file imports nothing.

        Where there is no keychain yet, the import creates one without a passphrase, and says so; to have one with a passphrase, run 'keysmith create' first (or 'keysmith passwd' afterwards).
        """,
    options: [stdinOption], positionalNames: ["FILE"]
) { invocation throws(CommandLineError) in
    guard let path = invocation.arguments.positionals.first else { throw invocation.usageError("FILE is required") }
    guard let archive = FileManager.default.contents(atPath: path) else {
        throw .failure("cannot read \(path).", recovery: "check the file name and its permissions.")
    }
    let directory = invocation.settings.keychainDirectory ?? KeychainEnvironment.current.directory
    let existed = try withKeychain(invocation) { KeychainEnvironment.keychainExists }
    let passphrase = try readPassphrases(invocation, prompts: [("archive passphrase: ", false)])[0]
    let summary = try withKeychain(invocation) { try KeychainArchive.import(archive, passphrase: passphrase) }
    invocation.output.info("imported \(summary.added) item(s); \(summary.skipped) were already here")
    if !existed && summary.added > 0 {
        invocation.output.info(
            "created the keychain in \(directory.path), without a passphrase (there was none): its items are always "
                + "readable by your processes; give it a passphrase with 'keysmith passwd'.")
    }
}
#endif
