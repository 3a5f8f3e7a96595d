#if !canImport(Security)
import Foundation

/// How the secret of an item with access control is stored, inside the item's class-key
/// encryption: the secret sealed under a random item key, and that item key sealed once
/// for each way the policy can be satisfied (a "path": biometry; the passcode; biometry and
/// the application password; …).
///
/// Each path's key is a keyed BLAKE2b, under the envelope's base key, of the item's
/// reference and flags and of what the path needs:
///
/// - biometry: the X25519 shared secret of an ephemeral key and the keychain's biometry key
///   pair, plus, for `.biometryCurrentSet`, the identity of the enrolled set at the time
///   the item was stored (a changed set gives another key: the item is unreadable for good);
/// - passcode: the shared secret with the passcode key pair (whose private key opens only
///   with the keychain passphrase when there is one);
/// - application password: Argon2id of the password with the item's own salt.
///
/// So the class key alone (or a copy of the database and the device key with the check
/// patched out) opens the attributes and this envelope, not the secret.
///
/// The base key: in version 2, 32 random bytes of this envelope (inside the item's class-key
/// encryption, like the whole envelope); in version 1, the item key of the item's protection
/// class. A passphrase change replaces the class keys, so it turns a version 1 envelope into
/// a version 2 one (``rekeyed(reference:classKey:biometrySecret:oldPasscodeSecret:newPasscodeSecret:)``).
///
/// Layout: `01` or `02`, flags (u64), ephemeral public key (32), in version 2 the base key
/// (32), password parameters (u16 length, then ``PassphraseKey`` record, or 0), path count
/// (u8), per path: requirements (u8), nonce (24), sealed item key (48); then secret nonce
/// (24), secret length (u32), sealed secret. Little-endian.
struct AccessControlEnvelope {
    /// What one path needs.
    struct Requirements: OptionSet, Hashable {
        let rawValue: UInt8
        static let biometry = Requirements(rawValue: 1)
        /// The enrolled set at storage time (with ``biometry``).
        static let currentSet = Requirements(rawValue: 2)
        static let passcode = Requirements(rawValue: 4)
        static let applicationPassword = Requirements(rawValue: 8)
        /// A paired companion device: never available here.
        static let companion = Requirements(rawValue: 16)
    }

    struct Path {
        var requirements: Requirements
        var nonce: Data
        var sealedKey: Data
    }

    /// What opening a path needs, gathered by the caller after authentication.
    struct PathSecrets {
        var biometrySecret: SecretKey? = nil
        var enrolledSet: Data? = nil
        var passcodeSecret: SecretKey? = nil
        var applicationPassword: Data? = nil
    }

    var flags: UInt64
    var ephemeralPublicKey: Data
    /// The key the path keys are derived under (version 2); `nil` in a version 1 envelope,
    /// whose path keys are derived under the item key of its protection class.
    var base: SecretKey?
    var passwordParameters: PassphraseKey?
    var paths: [Path]
    var secretNonce: Data
    var secretCiphertext: Data

    // MARK: Policy

    /// The ways `flags` can be satisfied, biometric ones first (as `.userPresence` tries
    /// biometry before the passcode). Empty when the flags need no authentication.
    static func paths(for flags: SecAccessControlCreateFlags) -> [Requirements] {
        var terms: [[Requirements]] = []
        if flags.contains(.userPresence) { terms.append([.biometry, .passcode]) }
        if flags.contains(.biometryAny) { terms.append([.biometry]) }
        if flags.contains(.biometryCurrentSet) { terms.append([[.biometry, .currentSet]]) }
        if flags.contains(.devicePasscode) { terms.append([.passcode]) }
        if flags.contains(.companion) { terms.append([.companion]) }
        var paths: [Requirements]
        if terms.isEmpty {
            paths = flags.contains(.applicationPassword) ? [[]] : []
        } else if flags.contains(.or) {
            paths = terms.flatMap { $0 }
        } else {
            // `.and`, and Apple's default for several constraints: every one is needed.
            paths = [[]]
            for term in terms {
                paths = paths.flatMap { prefix in term.map { prefix.union($0) } }
            }
        }
        if flags.contains(.applicationPassword) { paths = paths.map { $0.union(.applicationPassword) } }
        var unique: [Requirements] = []
        for path in paths where !unique.contains(path) { unique.append(path) }
        // Biometric paths first, then the others, keeping the order within each.
        return unique.filter { $0.contains(.biometry) } + unique.filter { !$0.contains(.biometry) }
    }

    // MARK: Sealing

    /// An application password stretched with Argon2id, with the parameters and salt that
    /// the envelope keeps.
    struct StretchedPassword {
        let parameters: PassphraseKey
        let key: SecretKey

        /// Stretches `password` with fresh parameters (slow: done before the keychain's lock
        /// is taken).
        init(_ password: Data) throws {
            parameters = PassphraseKey.fresh()
            key = try parameters.stretch(password)
        }
    }

    /// Seals `secret` for `flags`.
    /// - Parameters:
    ///   - publicKeys: The keychain's biometry and passcode public keys.
    ///   - enrolledSet: The enrolled set, needed when a path binds it.
    ///   - password: The stretched application password, needed with `.applicationPassword`.
    ///   - reference: The item's persistent reference.
    static func seal(
        _ secret: SecretData, flags: SecAccessControlCreateFlags, reference: Data,
        publicKeys: [AccessControlKeys.Slot: Data], enrolledSet: Data?, password: StretchedPassword?
    ) throws -> SecretData {
        let (ephemeral, ephemeralPublicKey) = AccessControlKeys.ephemeral()
        let itemKey = SecretKey.random()
        let base = SecretKey.random()
        var parameters: PassphraseKey?
        var passwordKey: SecretKey?
        if flags.contains(.applicationPassword) {
            guard let password else { throw AccessControlEnvelope.missingPassword }
            parameters = password.parameters
            passwordKey = password.key
        }
        var paths: [Path] = []
        for requirements in Self.paths(for: flags) {
            // A path that can never be taken here (a companion device; the enrolled set
            // when no fingers are enrolled) is kept without a sealed key.
            if requirements.contains(.companion) || (requirements.contains(.currentSet) && enrolledSet == nil) {
                paths.append(Path(requirements: requirements, nonce: Data(count: Sodium.nonceLength), sealedKey: Data()))
                continue
            }
            var biometryShared: SecretKey?
            var passcodeShared: SecretKey?
            if requirements.contains(.biometry) {
                guard let publicKey = publicKeys[.biometry], let shared = AccessControlKeys.sharedSecret(ephemeral, publicKey)
                else { throw damagedKeys }
                biometryShared = shared
            }
            if requirements.contains(.passcode) {
                guard let publicKey = publicKeys[.passcode], let shared = AccessControlKeys.sharedSecret(ephemeral, publicKey)
                else { throw damagedKeys }
                passcodeShared = shared
            }
            let kek = pathKey(
                requirements, flags: UInt64(flags.rawValue), reference: reference, biometryShared: biometryShared,
                enrolledSet: enrolledSet, passcodeShared: passcodeShared, passwordKey: passwordKey, base: base)
            let ad = pathAD(reference)
            let sealed = itemKey.withUnsafeBytes { key in ad.withUnsafeBytes { Sodium.seal(key, associatedData: $0, key: kek) } }
            paths.append(Path(requirements: requirements, nonce: sealed.nonce, sealedKey: sealed.ciphertext))
        }
        if paths.allSatisfy({ $0.sealedKey.isEmpty }) && paths.contains(where: { $0.requirements.contains(.currentSet) }) {
            throw noEnrolledSet
        }
        let ad = secretAD(reference)
        let sealedSecret = secret.withUnsafeBytes { plain in ad.withUnsafeBytes { Sodium.seal(plain, associatedData: $0, key: itemKey) } }
        let envelope = AccessControlEnvelope(
            flags: UInt64(flags.rawValue), ephemeralPublicKey: ephemeralPublicKey, base: base, passwordParameters: parameters,
            paths: paths, secretNonce: sealedSecret.nonce, secretCiphertext: sealedSecret.ciphertext)
        return envelope.encoded()
    }

    /// Opens the secret through `path` with what authentication released, or `nil` when
    /// those secrets do not open it (a changed enrolled set, a wrong application password).
    /// - Parameter classKey: The item key of the item's protection class (the base key of
    ///   a version 1 envelope).
    func open(path: Path, secrets: PathSecrets, reference: Data, classKey: SecretKey) throws -> SecretData? {
        let requirements = path.requirements
        if path.sealedKey.isEmpty { return nil }
        var biometryShared: SecretKey?
        var passcodeShared: SecretKey?
        if requirements.contains(.biometry) {
            guard let secret = secrets.biometrySecret else { return nil }
            biometryShared = AccessControlKeys.sharedSecret(secret, ephemeralPublicKey)
            if biometryShared == nil { return nil }
        }
        if requirements.contains(.passcode) {
            guard let secret = secrets.passcodeSecret else { return nil }
            passcodeShared = AccessControlKeys.sharedSecret(secret, ephemeralPublicKey)
            if passcodeShared == nil { return nil }
        }
        var passwordKey: SecretKey?
        if requirements.contains(.applicationPassword) {
            guard let password = secrets.applicationPassword, let passwordParameters else { return nil }
            passwordKey = try passwordParameters.stretch(password)
        }
        let kek = Self.pathKey(
            requirements, flags: flags, reference: reference, biometryShared: biometryShared,
            enrolledSet: requirements.contains(.currentSet) ? secrets.enrolledSet : nil, passcodeShared: passcodeShared,
            passwordKey: passwordKey, base: base ?? classKey)
        let pathAD = Self.pathAD(reference)
        guard let opened = path.sealedKey.withUnsafeBytes({ c in
            path.nonce.withUnsafeBytes { n in pathAD.withUnsafeBytes { Sodium.open(c, nonce: n, associatedData: $0, key: kek) } }
        }) else { return nil }
        let itemKey = opened.withUnsafeBytes { SecretKey(copying: $0) }
        let secretAD = Self.secretAD(reference)
        guard let secret = secretCiphertext.withUnsafeBytes({ c in
            secretNonce.withUnsafeBytes { n in secretAD.withUnsafeBytes { Sodium.open(c, nonce: n, associatedData: $0, key: itemKey) } }
        }) else { return nil }
        return secret.withUnsafeBytes { SecretData(copying: $0) }
    }

    private static func pathKey(
        _ requirements: Requirements, flags: UInt64, reference: Data, biometryShared: SecretKey?, enrolledSet: Data?,
        passcodeShared: SecretKey?, passwordKey: SecretKey?, base: SecretKey
    ) -> SecretKey {
        var flagBytes = Data(count: 8)
        flagBytes.withUnsafeMutableBytes { $0.storeBytes(of: flags.littleEndian, as: UInt64.self) }
        var parts = [Data("keysmith.acl.path.v1".utf8), reference, flagBytes, Data([requirements.rawValue])]
        for secret in [biometryShared, passcodeShared, passwordKey] {
            parts.append(secret.map { key in key.withUnsafeBytes { Data($0) } } ?? Data())
        }
        parts.append(enrolledSet ?? Data())
        defer {
            for index in 4..<7 { parts[index].withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) } }
        }
        return KeyHierarchy.hash(key: base, parts: parts)
    }

    private static func pathAD(_ reference: Data) -> [UInt8] { Array("keysmith.acl.key.v1".utf8) + Array(reference) }
    private static func secretAD(_ reference: Data) -> [UInt8] { Array("keysmith.acl.secret.v1".utf8) + Array(reference) }

    // MARK: Encoding

    func encoded() -> SecretData {
        var bytes: [UInt8] = [base == nil ? 1 : 2]
        defer { bytes.withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) } }
        func integer<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        integer(flags)
        bytes.append(contentsOf: ephemeralPublicKey)
        base?.withUnsafeBytes { bytes.append(contentsOf: $0) }
        let parameters = passwordParameters?.record ?? Data()
        integer(UInt16(parameters.count))
        bytes.append(contentsOf: parameters)
        bytes.append(UInt8(paths.count))
        for path in paths {
            bytes.append(path.requirements.rawValue)
            bytes.append(contentsOf: path.nonce)
            integer(UInt16(path.sealedKey.count))
            bytes.append(contentsOf: path.sealedKey)
        }
        bytes.append(contentsOf: secretNonce)
        integer(UInt32(secretCiphertext.count))
        bytes.append(contentsOf: secretCiphertext)
        return bytes.withUnsafeBytes { SecretData(copying: $0) }
    }

    init(
        flags: UInt64, ephemeralPublicKey: Data, base: SecretKey?, passwordParameters: PassphraseKey?, paths: [Path],
        secretNonce: Data, secretCiphertext: Data
    ) {
        self.flags = flags
        self.ephemeralPublicKey = ephemeralPublicKey
        self.base = base
        self.passwordParameters = passwordParameters
        self.paths = paths
        self.secretNonce = secretNonce
        self.secretCiphertext = secretCiphertext
    }

    /// Parses an envelope.
    /// - Throws: errSecDecode for bytes that are not one.
    init(decoding data: SecretData) throws {
        var bytes = data.withUnsafeBytes { Data($0) }
        defer { bytes.withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) } }
        var offset = 0
        func take(_ count: Int) throws -> Data {
            guard count >= 0, offset + count <= bytes.count else { throw AccessControlEnvelope.damaged }
            defer { offset += count }
            return bytes.subdata(in: offset..<(offset + count))
        }
        func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
            let chunk = try take(MemoryLayout<T>.size)
            var value: T = 0
            for (index, byte) in chunk.enumerated() { value |= T(byte) << (8 * index) }
            return value
        }
        let version = try integer(UInt8.self)
        guard version == 1 || version == 2 else { throw Self.damaged }
        flags = try integer(UInt64.self)
        ephemeralPublicKey = try take(AccessControlKeys.publicKeyLength)
        if version == 2 {
            guard offset + Sodium.keyLength <= bytes.count else { throw Self.damaged }
            base = bytes.withUnsafeBytes { SecretKey(copying: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + Sodium.keyLength)])) }
            offset += Sodium.keyLength
        } else {
            base = nil
        }
        let parametersLength = Int(try integer(UInt16.self))
        if parametersLength > 0 {
            guard let parsed = PassphraseKey(record: try take(parametersLength)) else { throw Self.damaged }
            passwordParameters = parsed
        } else {
            passwordParameters = nil
        }
        var paths: [Path] = []
        for _ in 0..<Int(try integer(UInt8.self)) {
            let requirements = Requirements(rawValue: try integer(UInt8.self))
            let nonce = try take(Sodium.nonceLength)
            let sealed = try take(Int(try integer(UInt16.self)))
            paths.append(Path(requirements: requirements, nonce: nonce, sealedKey: sealed))
        }
        self.paths = paths
        secretNonce = try take(Sodium.nonceLength)
        secretCiphertext = try take(Int(try integer(UInt32.self)))
        guard offset == bytes.count else { throw Self.damaged }
    }

    // MARK: A passphrase change

    /// This envelope as a passphrase change leaves it: its passcode paths sealed to the new
    /// passcode key pair, and (for a class key that is replaced) path keys no longer derived
    /// under the old class key. `nil` when nothing has to change.
    ///
    /// The item key is taken out through a path that needs only the keychain's own keys
    /// (biometry, the passcode), and sealed again for each such path under a new random base
    /// key. A path that needs an application password or the enrolled set cannot be sealed
    /// again without them: it stays as it is, and so does the base key (a version 1
    /// envelope keeps its old class item key as its base, inside the item's new encryption).
    /// - Parameters:
    ///   - classKey: The item key the envelope's class had until now (a version 1 envelope's base).
    ///   - classKeyReplaced: Whether that key is being replaced (classes A and C).
    ///   - biometrySecret: The biometry private key (unchanged by the passphrase).
    ///   - oldPasscodeSecret: The passcode private key until now (`nil`: the keychain had none).
    ///   - newPasscodeSecret: The new passcode private key.
    /// - Throws: errSecDecode when a passcode path cannot be moved (it also needs an
    ///   application password or the enrolled set, or no path opens): nothing is changed.
    func rekeyed(
        reference: Data, classKey: SecretKey, classKeyReplaced: Bool, biometrySecret: SecretKey?,
        oldPasscodeSecret: SecretKey?, newPasscodeSecret: SecretKey
    ) throws -> AccessControlEnvelope? {
        let sealedPaths = paths.filter { !$0.sealedKey.isEmpty }
        let hasPasscodePath = sealedPaths.contains { $0.requirements.contains(.passcode) }
        let needsNewBase = base == nil && classKeyReplaced
        if !hasPasscodePath && !needsNewBase { return nil }
        let ownKeys: Requirements = [.biometry, .passcode]
        let stuck = sealedPaths.filter { !$0.requirements.isSubset(of: ownKeys) }
        if stuck.contains(where: { $0.requirements.contains(.passcode) }) { throw Self.cannotMovePasscodePath }
        let oldBase = base ?? classKey
        func shared(_ secret: SecretKey?, _ requirements: Requirements, _ needed: Requirements) -> SecretKey?? {
            guard requirements.contains(needed) else { return .some(nil) }
            guard let secret, let value = AccessControlKeys.sharedSecret(secret, ephemeralPublicKey) else { return nil }
            return .some(value)
        }
        var itemKey: SecretKey?
        for path in sealedPaths where path.requirements.isSubset(of: ownKeys) {
            guard let biometry = shared(biometrySecret, path.requirements, .biometry),
                let passcode = shared(oldPasscodeSecret, path.requirements, .passcode)
            else { continue }
            let kek = Self.pathKey(
                path.requirements, flags: flags, reference: reference, biometryShared: biometry, enrolledSet: nil,
                passcodeShared: passcode, passwordKey: nil, base: oldBase)
            let ad = Self.pathAD(reference)
            if let opened = path.sealedKey.withUnsafeBytes({ c in
                path.nonce.withUnsafeBytes { n in ad.withUnsafeBytes { Sodium.open(c, nonce: n, associatedData: $0, key: kek) } }
            }) {
                itemKey = opened.withUnsafeBytes { SecretKey(copying: $0) }
                break
            }
        }
        guard let itemKey else {
            if hasPasscodePath { throw Self.cannotMovePasscodePath }
            // Only paths that need what the keychain does not hold: they keep their keys,
            // derived under the old base, which the envelope now carries.
            var copy = self
            copy.base = oldBase.withUnsafeBytes { SecretKey(copying: $0) }
            return copy
        }
        let newBase = stuck.isEmpty ? SecretKey.random() : oldBase.withUnsafeBytes { SecretKey(copying: $0) }
        var copy = self
        copy.base = newBase
        copy.paths = try paths.map { path in
            guard !path.sealedKey.isEmpty, path.requirements.isSubset(of: ownKeys) else { return path }
            guard let biometry = shared(biometrySecret, path.requirements, .biometry),
                let passcode = shared(newPasscodeSecret, path.requirements, .passcode)
            else { throw Self.damagedKeys }
            let kek = Self.pathKey(
                path.requirements, flags: flags, reference: reference, biometryShared: biometry, enrolledSet: nil,
                passcodeShared: passcode, passwordKey: nil, base: newBase)
            let ad = Self.pathAD(reference)
            let sealed = itemKey.withUnsafeBytes { key in ad.withUnsafeBytes { Sodium.seal(key, associatedData: $0, key: kek) } }
            return Path(requirements: path.requirements, nonce: sealed.nonce, sealedKey: sealed.ciphertext)
        }
        return copy
    }

    // MARK: Failures

    static let cannotMovePasscodePath = KeychainFailure(
        errSecDecode,
        "An access-controlled item's passcode route also needs an application password or the enrolled fingers (or does not open), so it cannot be moved to a new passphrase; nothing was changed.",
        recovery: "Read that item and store it again with access control that the keychain passphrase alone satisfies (or delete it), then change the passphrase.")

    static let damaged = KeychainFailure(
        errSecDecode, "An access-controlled item's protected data is damaged.",
        recovery: "Delete the item and store it again.")

    static let damagedKeys = KeychainFailure(
        errSecDecode, "The keychain's access-control keys are damaged.",
        recovery: "Restore the keychain from a backup.")

    static let noEnrolledSet = KeychainFailure(
        errSecAuthFailed,
        "The item's access control (.biometryCurrentSet) binds the enrolled fingers, and no fingerprint authenticator with an enrolled finger is available.",
        recovery: "Enroll a finger (fprintd-enroll), or choose .biometryAny or .userPresence.")

    static let missingPassword = KeychainFailure(
        errSecAuthFailed,
        "The item's access control includes .applicationPassword, and no application password was given.",
        recovery: "Set it with LAContext.setCredential(_:type: .applicationPassword) and pass the context as kSecUseAuthenticationContext.")
}
#endif
