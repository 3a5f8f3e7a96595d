#if !canImport(Security)
import CKeyutils
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where a keychain's lock state lives, shared by the user's processes: the unlock
/// secrets of class A (while unlocked) and class C (from the first unlock on).
///
/// A secret here is not a class key: it is derived from the passphrase, and opens the
/// class key only together with the device key. Holding it is what "unlocked" means.
///
/// Two places, chosen once per process:
/// - the kernel keyring: a `user` key `keysmith:<keychain id>:a` (or `:c`) in the user
///   keyring (`@u`), readable by every process of the user, whatever its session, with a
///   kernel-enforced timeout for class A (auto-lock). Gone at reboot, as on iOS.
/// - process memory, when the keyring is unavailable (seccomp in containers, a kernel
///   without keys) or `KEYSMITH_LOCK_STATE=process` asks for it: then the state is this
///   process's alone.
enum LockStateStore {
    /// Which secret: class A ("when unlocked") or class C ("after first unlock").
    enum Slot: String, Sendable {
        case a, c
    }

    /// Where lock state is kept.
    enum Backend: String, Sendable {
        case kernelKeyring = "kernel keyring"
        case processMemory = "process memory"
    }

    /// The backend this process uses (probed once).
    static let backend: Backend = {
        if ProcessInfo.processInfo.environment["KEYSMITH_LOCK_STATE"] == "process" { return .processMemory }
        // A search for a key that does not exist tells whether the syscalls work at all.
        let found = keyctl_search(KEY_SPEC_USER_KEYRING, "user", "keysmith:probe", 0)
        if found >= 0 || errno == ENOKEY || errno == EKEYEXPIRED || errno == EKEYREVOKED { return .kernelKeyring }
        return .processMemory
    }()

    /// The keyring description of one unlock secret (`keysmith:<keychain id>:<slot>`), made
    /// once per keychain, with the serial of the key it last named (so a read is one
    /// `keyctl_read`, not a search).
    final class Name: Sendable {
        let text: String
        /// The serial of the key found under ``text``, or 0 (none known yet). A stale serial
        /// (the key was removed, expired or replaced) fails its read and is searched again.
        let serial = Atomic<Int32>(0)

        init(_ slot: Slot, keychainID: Data) {
            text = LockStateStore.description(slot, keychainID: keychainID)
        }
    }

    private static let memory = Mutex<[String: (secret: SecretKey, expiry: UInt64?)]>([:])

    private static func description(_ slot: Slot, keychainID: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes = Array("keysmith:".utf8)
        for byte in keychainID {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0F)])
        }
        bytes.append(UInt8(ascii: ":"))
        bytes.append(contentsOf: slot.rawValue.utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads the secret in `slot` for the keychain `keychainID` into `destination` (32
    /// bytes of locked memory), without other copies.
    /// - Returns: `false` when there is none (locked, expired, never unlocked since boot).
    static func read(_ slot: Slot, keychainID: Data, into destination: SecretKey) -> Bool {
        read(Name(slot, keychainID: keychainID), into: destination)
    }

    /// ``read(_:keychainID:into:)`` with the name made beforehand.
    static func read(_ lockStateName: Name, into destination: SecretKey) -> Bool {
        let name = lockStateName.text
        switch backend {
        case .processMemory:
            return memory.withLock { entries in
                guard let entry = entries[name] else { return false }
                if let expiry = entry.expiry, DispatchTime.now().uptimeNanoseconds >= expiry {
                    entries[name] = nil
                    return false
                }
                entry.secret.withUnsafeBytes { source in destination.withUnsafeMutableBytes { $0.copyMemory(from: source) } }
                return true
            }
        case .kernelKeyring:
            var serial = lockStateName.serial.load(ordering: .relaxed)
            for _ in 0..<2 {
                if serial == 0 {
                    let found = keyctl_search(KEY_SPEC_USER_KEYRING, "user", name, 0)
                    guard found > 0 else { return false }
                    serial = Int32(truncatingIfNeeded: found)
                    lockStateName.serial.store(serial, ordering: .relaxed)
                }
                let length = destination.withUnsafeMutableBytes { keyctl_read(serial, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
                if length == destination.count { return true }
                // Expired, revoked, removed, or not ours: forget the serial and search once more.
                destination.withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) }
                lockStateName.serial.store(0, ordering: .relaxed)
                serial = 0
            }
            return false
        }
    }

    /// The secret in `slot` for the keychain `keychainID`, or `nil` when there is none
    /// (locked, expired, never unlocked since boot).
    static func secret(_ slot: Slot, keychainID: Data) -> SecretKey? {
        let key = SecretKey(uninitializedCount: Sodium.keyLength)
        return read(slot, keychainID: keychainID, into: key) ? key : nil
    }

    /// Stores `secret` in `slot`, replacing what was there; it expires after `timeout`
    /// seconds when one is given (`nil` or 0: until removed or reboot).
    /// - Throws: errSecNotAvailable when the keyring refuses (quota, permissions).
    static func store(_ slot: Slot, secret: SecretKey, keychainID: Data, timeout: UInt32?) throws {
        let name = description(slot, keychainID: keychainID)
        switch backend {
        case .processMemory:
            let expiry = timeout.flatMap { $0 == 0 ? nil : DispatchTime.now().uptimeNanoseconds + UInt64($0) * 1_000_000_000 }
            let copy = secret.withUnsafeBytes { SecretKey(copying: $0) }
            memory.withLock { $0[name] = (copy, expiry) }
        case .kernelKeyring:
            // Made in this process's own keyring, which it possesses, so that it may set the
            // key's permissions and timeout (a process that does not possess the user
            // keyring, one started without a session keyring linking it, may not change a
            // key found there); then linked into the user keyring, where it takes the place
            // of the secret of the same name, and unlinked from the process keyring.
            func add() -> key_serial_t {
                secret.withUnsafeBytes { bytes in add_key("user", name, bytes.baseAddress, bytes.count, KEY_SPEC_PROCESS_KEYRING) }
            }
            var serial = add()
            if serial < 0 && errno == EDQUOT {
                // The user's key quota is full (200 keys for a user who is not root): the
                // unlock secrets of other keychains make room, those of keychains that are
                // only "after first unlock" (locked) first, then the others. They are locked
                // as after a restart; keychains whose folders were deleted leave nothing.
                serial = retryingWhileFreed(add, evictingOtherKeychains: keychainID)
            }
            guard serial >= 0 else {
                let cause = String(cString: strerror(errno))
                throw KeychainFailure(
                    errSecNotAvailable, "The kernel keyring refused the keychain's unlock state: \(cause).",
                    recovery: errno == EDQUOT
                        ? "The user's key quota is full with keys of other programs (see /proc/key-users and keyctl show @u); remove some (keyctl unlink) or raise /proc/sys/kernel/keys/maxkeys and maxbytes."
                        : "Set KEYSMITH_LOCK_STATE=process to keep the lock state in this process only.")
            }
            defer { _ = keyctl_unlink(serial, KEY_SPEC_PROCESS_KEYRING) }
            // Every process of this user may use it, also those without this session
            // keyring (the default mask lets only possessors read); possessing it gives
            // nothing more (a process of another user that possesses it through a shared
            // session keyring can neither read nor write it). Set before it is linked into
            // the user keyring, so it is never there with the default mask.
            _ = keyctl_setperm(serial, ownerOnlyPermissions)
            // Writing a key resets its expiry, so the timeout is set after every write.
            _ = keyctl_set_timeout(serial, UInt32(timeout ?? 0))
            // The secret it replaces is invalidated once the new one is in place: a key only
            // displaced from the user keyring stays readable by its serial for a while,
            // and readers keep serials (``Name/serial``).
            let replaced = keyctl_search(KEY_SPEC_USER_KEYRING, "user", name, 0)
            // (Invalidated, not unlinked: an unlink removes whatever key of that name the
            // keyring holds, which is the new one by then.)
            defer { if replaced > 0 && replaced != serial { _ = keyctl_invalidate(key_serial_t(replaced)) } }
            var linked = keyctl_link(serial, KEY_SPEC_USER_KEYRING)
            if linked != 0 && errno == EDQUOT {
                linked = retryingWhileFreed({ key_serial_t(keyctl_link(serial, KEY_SPEC_USER_KEYRING)) }, evictingOtherKeychains: keychainID) >= 0 ? 0 : -1
            }
            guard linked == 0 else {
                throw KeychainFailure(
                    errSecNotAvailable, "The kernel keyring refused the keychain's unlock state: \(String(cString: strerror(errno))).",
                    recovery: "Set KEYSMITH_LOCK_STATE=process to keep the lock state in this process only.")
            }
        }
    }

    /// How long the secret in a slot stays.
    enum TimeLeft: Sendable, Equatable {
        /// There is none (locked, expired, never unlocked since boot).
        case none
        /// It stays until removed (or the machine restarts).
        case unlimited
        /// It expires in about this many seconds. The kernel keyring tells whole minutes
        /// above a minute (and hours above an hour): the value is then rounded down.
        case seconds(UInt64)
    }

    /// How long the secret in `slot` for the keychain `keychainID` stays, as every process
    /// of the user sees it.
    static func timeLeft(_ slot: Slot, keychainID: Data) -> TimeLeft {
        let name = description(slot, keychainID: keychainID)
        switch backend {
        case .processMemory:
            return memory.withLock { entries in
                guard let entry = entries[name] else { return .none }
                guard let expiry = entry.expiry else { return .unlimited }
                let now = DispatchTime.now().uptimeNanoseconds
                return now >= expiry ? .none : .seconds((expiry - now) / 1_000_000_000)
            }
        case .kernelKeyring:
            let serial = keyctl_search(KEY_SPEC_USER_KEYRING, "user", name, 0)
            guard serial > 0 else { return .none }
            // The expiry is not given by keyctl; /proc/keys shows it, per key the user may view:
            // "SERIAL FLAGS USAGE TIMEOUT ...", TIMEOUT as perm, expd, 45s, 14m, 3h, 6d or 2w.
            guard let text = procKeys() else { return .unlimited }
            for line in text.split(separator: "\n") {
                let columns = line.split(separator: " ", omittingEmptySubsequences: true)
                guard columns.count > 3, Int(columns[0], radix: 16) == Int(serial) else { continue }
                let timeout = columns[3]
                if timeout == "perm" { return .unlimited }
                if timeout == "expd" { return .none }
                guard let unit = timeout.last, let count = UInt64(timeout.dropLast()) else { return .unlimited }
                switch unit {
                case "s": return .seconds(count)
                case "m": return .seconds(count * 60)
                case "h": return .seconds(count * 3_600)
                case "d": return .seconds(count * 86_400)
                case "w": return .seconds(count * 604_800)
                default: return .unlimited
                }
            }
            return .unlimited
        }
    }

    /// The text of /proc/keys, read to its end (Foundation's file reading stops after the
    /// first page of a /proc file, which holds only the first fifty keys or so).
    private static func procKeys() -> String? {
        let descriptor = open("/proc/keys", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes += chunk[0..<count]
            } else if count == 0 {
                return String(decoding: bytes, as: UTF8.self)
            } else if errno != EINTR {
                return nil
            }
        }
    }

    /// Sets when the secret in `slot` expires, counted from now (`nil` or 0: never), without
    /// changing it. Does nothing when there is none.
    /// - Returns: whether there was a secret to time.
    @discardableResult
    static func setTimeout(_ slot: Slot, keychainID: Data, timeout: UInt32?) -> Bool {
        let name = description(slot, keychainID: keychainID)
        switch backend {
        case .processMemory:
            return memory.withLock { entries in
                guard let entry = entries[name] else { return false }
                let expiry = timeout.flatMap { $0 == 0 ? nil : DispatchTime.now().uptimeNanoseconds + UInt64($0) * 1_000_000_000 }
                entries[name] = (entry.secret, expiry)
                return true
            }
        case .kernelKeyring:
            let serial = keyctl_search(KEY_SPEC_USER_KEYRING, "user", name, 0)
            guard serial > 0 else { return false }
            return keyctl_set_timeout(key_serial_t(serial), UInt32(timeout ?? 0)) == 0
        }
    }

    /// Whether this process runs in a user namespace other than the machine's first one
    /// (`unshare --user`, a rootless container): the kernel keeps a user keyring per user
    /// namespace, so the lock state kept there is that namespace's alone. Read from
    /// `/proc/self/uid_map`, which maps every uid onto itself only in the first namespace.
    static let isInNestedUserNamespace: Bool = {
        guard let map = try? String(contentsOfFile: "/proc/self/uid_map", encoding: .utf8) else { return false }
        let fields = map.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
        return !(fields.count == 3 && fields[0] == "0" && fields[1] == "0" && fields[2] == "4294967295")
    }()

    /// The permissions of an unlock secret: the owning user may view, read, write, search,
    /// link and set attributes (what Keysmith does); a possessor only view it; nobody else
    /// anything.
    static let ownerOnlyPermissions = key_perm_t(KEY_POS_VIEW)
        | key_perm_t(KEY_USR_VIEW | KEY_USR_READ | KEY_USR_WRITE | KEY_USR_SEARCH | KEY_USR_LINK | KEY_USR_SETATTR)

    /// Calls `add` again after making room (``evictOtherKeychains(keeping:onlyLocked:)``):
    /// first the secrets of locked keychains, then all others. A removed key frees its
    /// quota when the kernel's key collector has run, shortly after: tried a few times.
    private static func retryingWhileFreed(_ add: () -> key_serial_t, evictingOtherKeychains keychainID: Data) -> key_serial_t {
        var serial: key_serial_t = -1
        for onlyLocked in [true, false] {
            guard evictOtherKeychains(keeping: keychainID, onlyLocked: onlyLocked) > 0 else { continue }
            for attempt in 0..<50 {
                serial = add()
                if serial >= 0 || errno != EDQUOT { return serial }
                usleep(UInt32(2_000 * min(attempt + 1, 10)))
            }
        }
        errno = EDQUOT
        return serial
    }

    /// The `keysmith:<id>:<slot>` keys in the user keyring, by keychain id (hexadecimal).
    static func keysInUserKeyring() -> [String: [(slot: String, serial: key_serial_t)]] {
        var buffer = [key_serial_t](repeating: 0, count: 512)
        let length = buffer.withUnsafeMutableBytes { keyctl_read(KEY_SPEC_USER_KEYRING, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
        guard length > 0 else { return [:] }
        if length > buffer.count * MemoryLayout<key_serial_t>.size {
            buffer = [key_serial_t](repeating: 0, count: length / MemoryLayout<key_serial_t>.size + 64)
            _ = buffer.withUnsafeMutableBytes { keyctl_read(KEY_SPEC_USER_KEYRING, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
        }
        let count = min(length / MemoryLayout<key_serial_t>.size, buffer.count)
        var keys: [String: [(slot: String, serial: key_serial_t)]] = [:]
        var description = [CChar](repeating: 0, count: 512)
        for serial in buffer.prefix(count) {
            let written = keyctl_describe(serial, &description, description.count)
            guard written > 0, written <= description.count else { continue }
            // "type;uid;gid;perm;description"
            let text = String(decoding: description.prefix(Int(written)).prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let fields = text.split(separator: ";", maxSplits: 4, omittingEmptySubsequences: false)
            guard fields.count == 5, fields[0] == "user", fields[1] == "\(getuid())" else { continue }
            let parts = fields[4].split(separator: ":")
            guard parts.count == 3, parts[0] == "keysmith", parts[2] == "a" || parts[2] == "c" else { continue }
            keys[String(parts[1]), default: []].append((String(parts[2]), serial))
        }
        return keys
    }

    /// Removes the unlock secrets of keychains other than `keychainID` from the user keyring
    /// (with `onlyLocked`, only those of keychains whose class A secret is gone already).
    /// - Returns: how many keys were removed.
    @discardableResult
    static func evictOtherKeychains(keeping keychainID: Data, onlyLocked: Bool) -> Int {
        let ours = hexadecimal(keychainID)
        var removed = 0
        for (id, keys) in keysInUserKeyring() where id != ours {
            if onlyLocked && keys.contains(where: { $0.slot == "a" }) { continue }
            for key in keys {
                discard(key.serial)
                removed += 1
            }
        }
        return removed
    }

    private static func hexadecimal(_ bytes: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Removes both secrets of the keychain `keychainID` (a deleted keychain leaves nothing
    /// in the kernel keyring).
    static func removeAll(keychainID: Data) {
        remove(.a, keychainID: keychainID)
        remove(.c, keychainID: keychainID)
    }

    /// Removes the secret in `slot` (locks that class in every process of the user).
    static func remove(_ slot: Slot, keychainID: Data) {
        let name = description(slot, keychainID: keychainID)
        switch backend {
        case .processMemory:
            memory.withLock { $0[name] = nil }
        case .kernelKeyring:
            let serial = keyctl_search(KEY_SPEC_USER_KEYRING, "user", name, 0)
            if serial >= 0 { discard(key_serial_t(serial)) }
        }
    }

    /// Removes a key from the user keyring and invalidates it (gone at once, rather than
    /// kept as a revoked key). Unlinked first (an unlink removes the key of that type and
    /// description from the keyring, so `serial` must be the one the keyring holds): the kernel charges the user's byte quota
    /// 4 bytes for each link in a keyring and gives them back on an unlink, not when the
    /// collector drops the link of an invalidated key, so invalidating alone would leak
    /// them until the next restart.
    static func discard(_ serial: key_serial_t) {
        _ = keyctl_unlink(serial, KEY_SPEC_USER_KEYRING)
        if keyctl_invalidate(serial) != 0 { _ = keyctl_revoke(serial) }
    }
}
#endif
