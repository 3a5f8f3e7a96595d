#if !canImport(Security)
import CSodium
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Moving a keychain's device key from its key file (`device.key`) into the TPM, and sealing
/// a PCR-bound key again after the PCRs changed.
///
/// The move is crash-safe: every step leaves a keychain that opens with all its items.
///
/// 1. The key file's key is checked against the database (its check value).
/// 2. The key is sealed by the TPM (crash point `move-sealed`: nothing on disk changed), and
///    unsealed again to check that the TPM gives back the same key.
/// 3. The blob is written to a temporary file, synced, and linked to `device.tpm2`, and the
///    directory is synced (`move-installed`: both files hold the same key). The presence
///    of `device.tpm2` is the record of the choice: from now on the keychain opens through
///    the TPM (`KEYSMITH_KEY_STORE` unset or `tpm2`), as a keychain created with it does.
/// 4. With PCR binding and a passphrase, the recovery seal is written (``TPM2RecoverySeal``;
///    `move-recovery-sealed`).
/// 5. The key file is overwritten with zeros and synced (`move-overwritten`: the key file
///    is now unreadable, `device.tpm2` opens the keychain), unlinked, and the directory
///    synced.
///
/// A keychain with both files (a move interrupted after step 3) opens through the TPM; the
/// command run again finishes the move: it checks that the TPM's key opens the database
/// (and equals the key file's, while that is still readable) before erasing the key file.
/// A temporary file left by a crash in step 3 (`.device.tpm2.PID.RANDOM.tmp`) is removed on
/// the next open, as the key file's are.
enum DeviceKeyMove {
    /// What a move did.
    enum Outcome: Sendable, Equatable {
        /// The key was sealed by the TPM and the key file erased.
        case moved
        /// An interrupted move was finished: the key file was erased.
        case finished
        /// The key was in the TPM already, and there is no key file.
        case alreadyInTPM
    }

    /// Moves the device key of the keychain in `directory` into the TPM (see above).
    /// - Parameters:
    ///   - passphrase: The keychain passphrase, needed when the key is bound to PCRs
    ///     (`KEYSMITH_TPM2_PCRS`) and the keychain has a passphrase (for the recovery seal);
    ///     checked against the keychain before anything changes.
    ///   - variables: `KEYSMITH_TPM2_TCTI`, `KEYSMITH_TPM2_PCRS`, `KEYSMITH_TPM2_PIN`, `KEYSMITH_KDF_PROFILE`.
    static func moveToTPM(directory: URL, passphrase: String?, variables: [String: String]) throws -> Outcome {
        let keyFile = directory.appendingPathComponent(KeychainEngine.keyFileName)
        let sealed = DeviceKeyStore.sealedKeyFile(besides: keyFile)
        let tcti = TPM2KeyStore.tcti(variables)
        let pin = TPM2KeyStore.pinAuth(variables)
        defer { KeychainEngine.close(directory: directory) }

        if let blob = try TPM2KeyStore.readBlob(at: sealed) {
            let fileExists = FileManager.default.fileExists(atPath: keyFile.path)
            let key = try TPM2KeyStore.unseal(blob, from: sealed, tcti: tcti, auth: TPM2KeyStore.needsPIN(blob) ? pin : nil)
            if !fileExists && !needsRecoverySeal(sealed, blob: blob, directory: directory) { return .alreadyInTPM }
            try requireFits(key, directory: directory)
            // While the key file is still readable, it must hold the same key.
            if let fileKey = try? DeviceKeyFile.load(at: keyFile), !equal(fileKey, key) {
                throw KeychainFailure(
                    errSecDecode,
                    "The keychain in \(directory.path) has both a key file and a TPM-sealed key, and they hold different keys; nothing was erased.",
                    recovery: "Move aside the one that does not belong to the keychain (the TPM-sealed key opens it, as 'keysmith status' shows), then run the command again.")
            }
            try writeRecoverySealIfNeeded(sealed, blob: blob, key: key, directory: directory, passphrase: passphrase, variables: variables)
            guard fileExists else { return .alreadyInTPM }
            try erase(keyFile, holding: key)
            return .finished
        }

        guard let key = try DeviceKeyFile.load(at: keyFile) else {
            throw KeychainFailure(
                errSecItemNotFound, "The keychain in \(directory.path) has no key file (device.key) to move.",
                recovery: "Check the keychain directory ('keysmith status' says where its device key is kept).")
        }
        try requireFits(key, directory: directory)
        let pcrMask = try TPM2KeyStore.pcrMask(variables)
        if pcrMask != 0, try hasPassphrase(directory) {
            // Checked before anything changes: a wrong passphrase leaves the key file alone.
            guard let passphrase else {
                throw KeychainFailure(
                    errSecInteractionNotAllowed,
                    "Binding the device key to PCRs needs the keychain passphrase, for the recovery seal that lets 'keysmith reseal-device-key' seal it again after a PCR change.",
                    recovery: "Give the keychain passphrase.")
            }
            try KeychainEngine.engine(for: directory, creating: false).keys.checkPassphrase(passphrase)
        }
        let blob = try TPM2KeyStore.seal(key, tcti: tcti, pcrMask: pcrMask, auth: pin, file: sealed)
        CrashPoint.reach("move-sealed")
        let unsealed = try TPM2KeyStore.unseal(blob, from: sealed, tcti: tcti, auth: pin)
        guard equal(unsealed, key) else {
            throw KeychainFailure(
                errSecInternalComponent, "The TPM gave back another key than the one it sealed; nothing was changed.",
                recovery: "Check the TPM (tpm2_selftest --fulltest); keep the key file.")
        }
        try TPM2KeyStore.install(TPM2KeyStore.magic + blob, at: sealed)
        // Another process may have installed a blob first (a second move at once): what is in
        // place must give the same key.
        guard let installed = try TPM2KeyStore.readBlob(at: sealed) else {
            throw KeychainFailure(errSecIO, "The TPM-sealed key file \(sealed.path) vanished right after it was written.")
        }
        if installed != blob {
            let other = try TPM2KeyStore.unseal(installed, from: sealed, tcti: tcti, auth: TPM2KeyStore.needsPIN(installed) ? pin : nil)
            guard equal(other, key) else {
                throw KeychainFailure(
                    errSecDecode, "Another TPM-sealed key file appeared at \(sealed.path) during the move, with another key; the key file was kept.",
                    recovery: "Move \(sealed.path) aside and run the command again.")
            }
        }
        CrashPoint.reach("move-installed")
        try writeRecoverySealIfNeeded(sealed, blob: installed, key: key, directory: directory, passphrase: passphrase, variables: variables)
        CrashPoint.reach("move-recovery-sealed")
        try erase(keyFile, holding: key)
        return .moved
    }

    /// Whether the keychain needs a recovery seal it does not have.
    private static func needsRecoverySeal(_ sealed: URL, blob: [UInt8], directory: URL) -> Bool {
        TPM2KeyStore.pcrMask(ofBlob: blob) != 0 && !FileManager.default.fileExists(atPath: TPM2RecoverySeal.url(besides: sealed).path)
            && ((try? hasPassphrase(directory)) ?? false)
    }

    private static func writeRecoverySealIfNeeded(
        _ sealed: URL, blob: [UInt8], key: SecretKey, directory: URL, passphrase: String?, variables: [String: String]
    ) throws {
        guard needsRecoverySeal(sealed, blob: blob, directory: directory) else { return }
        guard let passphrase else {
            throw KeychainFailure(
                errSecInteractionNotAllowed,
                "The device key is bound to PCRs and the keychain has a passphrase: its recovery seal needs the passphrase.",
                recovery: "Give the keychain passphrase.")
        }
        try KeychainEngine.engine(for: directory, creating: false).keys.checkPassphrase(passphrase)
        try TPM2RecoverySeal.write(sealedKeyFile: sealed, deviceKey: key, passphrase: passphrase, variables: variables)
    }

    /// Whether the keychain in `directory` has a passphrase (opening it as its files say).
    private static func hasPassphrase(_ directory: URL) throws -> Bool {
        try KeychainEngine.engine(for: directory, creating: false).keys.passphraseIsSet()
    }

    /// Seals the device key again to the PCRs' current values, after `passphrase` opened the
    /// recovery seal (the TPM checks it). The new `device.tpm2` replaces the old one
    /// atomically (a crash leaves one or the other; the old one still opens under the old
    /// PCR values). A wrong passphrase changes nothing.
    /// - Returns: the PCRs the key is bound to.
    static func reseal(directory: URL, passphrase: String, variables: [String: String]) throws -> UInt32 {
        let keyFile = directory.appendingPathComponent(KeychainEngine.keyFileName)
        let sealed = DeviceKeyStore.sealedKeyFile(besides: keyFile)
        let tcti = TPM2KeyStore.tcti(variables)
        defer { KeychainEngine.close(directory: directory) }
        guard let old = try TPM2KeyStore.readBlob(at: sealed) else {
            throw KeychainFailure(
                errSecItemNotFound, "The keychain in \(directory.path) has no TPM-sealed device key (device.tpm2) to seal again.",
                recovery: "Move its key file into the TPM first: keysmith move-device-key --to tpm2")
        }
        let pcrMask = TPM2KeyStore.pcrMask(ofBlob: old)
        let pin: SecretKey?
        if TPM2KeyStore.needsPIN(old) {
            guard let given = TPM2KeyStore.pinAuth(variables) else {
                throw KeychainFailure(
                    errSecInteractionNotAllowed, "The device key is sealed with a TPM PIN: sealing it again needs the PIN too.",
                    recovery: "Set KEYSMITH_TPM2_PIN, or run keysmith from a terminal, where it asks for the PIN.")
            }
            pin = given
        } else {
            pin = nil
        }
        let key = try TPM2RecoverySeal.recover(sealedKeyFile: sealed, passphrase: passphrase, variables: variables)
        try requireFits(key, directory: directory)
        let blob = try TPM2KeyStore.seal(key, tcti: tcti, pcrMask: pcrMask, auth: pin, file: sealed)
        guard equal(try TPM2KeyStore.unseal(blob, from: sealed, tcti: tcti, auth: pin), key) else {
            throw KeychainFailure(errSecInternalComponent, "The TPM gave back another key than the one it sealed; nothing was changed.")
        }
        CrashPoint.reach("reseal-sealed")
        try replace(TPM2KeyStore.magic + blob, at: sealed, naming: "the TPM-sealed key file")
        return pcrMask
    }

    // MARK: - Files and checks

    /// Refuses a key that does not open the keychain's database (its check value differs).
    static func requireFits(_ key: SecretKey, directory: URL) throws {
        let path = directory.appendingPathComponent(KeychainEngine.databaseName).path
        let expected = try KeyHierarchy(deviceKey: key).checkValue
        let database: Database
        do {
            database = try Database(path: path, create: false)
        } catch {
            throw KeychainFailure(
                errSecItemNotFound, "There is no keychain database at \(path).",
                recovery: "Point --keychain or KEYSMITH_HOME at the keychain's directory.")
        }
        guard let statement = try? database.cachedStatement("SELECT value FROM meta WHERE key = 'key-check'"),
            (try? statement.step()) == true
        else {
            throw KeychainFailure(errSecDecode, "The keychain database at \(path) lacks its identity record.", recovery: "Restore it from a backup.")
        }
        let stored = statement.data(at: 0)
        statement.reset()
        guard Sodium.constantTimeEqual(stored, expected) else {
            throw KeychainFailure(
                errSecDecode, "The device key does not belong to the keychain database at \(path); nothing was changed.",
                recovery: "Put back the key file that was created with this keychain.")
        }
    }

    static func equal(_ a: SecretKey, _ b: SecretKey) -> Bool {
        a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in x.count == y.count && sodium_memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
    }

    /// Erases the key file that holds `key`: overwritten with zeros and synced, then
    /// unlinked, and the directory synced. (On a copy-on-write or journalling file system,
    /// or a flash drive, the old blocks may survive the overwrite; see docs/SECURITY.md.)
    ///
    /// Only that key file is erased: the file is read through the descriptor that
    /// overwrites it, and anything but `key` in the key file format (or the zeros of an
    /// erase that was interrupted) is refused and left alone, as is a file that another one
    /// replaced at the same path before the unlink: a key file changed since it was checked
    /// may hold something the TPM does not.
    static func erase(_ url: URL, holding key: SecretKey) throws {
        let fd = open(url.path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return }
            throw KeychainFailure(
                errSecIO, "Cannot open the key file \(url.path) to erase it: \(String(cString: strerror(errno))).",
                recovery: "Check its permissions, then run the command again.")
        }
        defer { close(fd) }
        let expectedLength = DeviceKeyFile.magic.count + Sodium.keyLength
        var contents = [UInt8](repeating: 0, count: expectedLength + 1)
        defer { contents.withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) } }
        let count = contents.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        let holdsKey = count == expectedLength && Array(contents[0..<DeviceKeyFile.magic.count]) == DeviceKeyFile.magic
            && key.withUnsafeBytes { k in
                contents.withUnsafeBytes { c in
                    sodium_memcmp(c.baseAddress! + DeviceKeyFile.magic.count, k.baseAddress!, Sodium.keyLength) == 0
                }
            }
        let zeroed = count == expectedLength && contents[0..<expectedLength].allSatisfy { $0 == 0 }
        guard holdsKey || zeroed else {
            throw KeychainFailure(
                errSecDecode,
                "The key file \(url.path) no longer holds the device key that was moved into the TPM (it was changed or replaced during the move); it was not erased. The keychain opens through the TPM.",
                recovery: "Find out what wrote \(url.path); move it aside (or delete it) once you know it is not needed, then run the command again.")
        }
        var info = stat()
        let known = fstat(fd, &info) == 0
        let size = known ? max(Int(info.st_size), expectedLength) : 4096
        let zeros = [UInt8](repeating: 0, count: size)
        let written = zeros.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        let synced = fsync(fd)
        guard written == size, synced == 0 else {
            throw KeychainFailure(
                errSecIO, "Overwriting the key file \(url.path) failed: \(String(cString: strerror(errno))).",
                recovery: "Check free disk space, then run the command again.")
        }
        CrashPoint.reach("move-overwritten")
        // The path must still name the file that was checked and overwritten.
        var named = stat()
        if known, lstat(url.path, &named) == 0, named.st_dev != info.st_dev || named.st_ino != info.st_ino {
            throw KeychainFailure(
                errSecDecode,
                "The key file \(url.path) was replaced by another file during the move; the new file was not erased. The keychain opens through the TPM.",
                recovery: "Find out what wrote \(url.path); move it aside once you know it is not needed, then run the command again.")
        }
        guard unlink(url.path) == 0 || errno == ENOENT else {
            throw KeychainFailure(
                errSecIO, "Removing the key file \(url.path) failed: \(String(cString: strerror(errno))).",
                recovery: "Check the permissions of the keychain directory, then run the command again.")
        }
        KeychainFiles.syncDirectory(url.deletingLastPathComponent())
    }

    /// Writes `bytes` (0600) to a temporary file beside `url`, syncs it, renames it over `url`
    /// and syncs the directory: a crash leaves the old file or the new one.
    static func replace(_ bytes: [UInt8], at url: URL, naming what: String) throws {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw KeychainFailure(
                errSecWrPerm, "Cannot create \(what) in \(url.deletingLastPathComponent().path): \(String(cString: strerror(errno))).",
                recovery: "Check that the keychain directory is writable by this user.")
        }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == bytes.count, synced == 0, rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw KeychainFailure(
                errSecIO, "Writing \(what) \(url.path) failed: \(reason).",
                recovery: "Check free disk space and permissions of the keychain directory.")
        }
        KeychainFiles.syncDirectory(url.deletingLastPathComponent())
    }
}

extension KeyHierarchy {
    /// Checks `passphrase` against the keychain without changing its lock state.
    /// - Throws: errSecAuthFailed for a wrong passphrase.
    func checkPassphrase(_ passphrase: String) throws {
        let parameters: PassphraseKey? = try locking {
            try refresh()
            return records.passphrase
        }
        guard let parameters else { return }
        let secrets = try parameters.secrets(for: passphrase)
        try locking {
            try refresh()
            guard records.passphrase == parameters, let c = records.wrapped[.c], unwrap(c, keyClass: .c, secret: secrets.c) != nil
            else { throw Self.wrongPassphrase }
        }
    }
}
#endif
