#if !canImport(Security)
import CSQLite
import CSodium
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `keychain.verified`: what the last full check at open found, so that the next open of
/// an unchanged keychain need not recompute every row's value again.
///
/// Opening a keychain checks the whole item set against ``RollbackAnchor`` (every row's
/// keyed value recomputed and summed), which costs time in proportion to the number of
/// items. After such a check has passed, the record states: "the database file with this
/// device, inode, size, change time and modification time, with no WAL beside it (or an
/// empty one), holding keychain `id`, was checked against this anchor and matched". At the
/// next open, when its MAC (a key derived from the device key) verifies and every one of
/// those values is exactly what the files show now, the recomputation is skipped; the
/// database's state is still compared with the anchor's, as before every read. Anything
/// else (no record, a damaged one, another keychain's, any value different) means the full
/// check, which then writes a new record.
///
/// Why a changed database cannot match an old record: every write to a file sets its change
/// time (`ctime`) to the current time, and no system call lets a user set it (`utimes`
/// sets only the access and modification times); a file put in place by `rename` or a copy
/// has a new change time too, and a new inode unless it is written over the old one in place.
/// A commit goes to the WAL first, which is then not empty; a checkpoint writes the database
/// file. A write through a shared mapping sets the change time only when it faults on a
/// page written back, so the check that writes a record writes the file's pages back first
/// (``Database/writeBackFile()``), and records are used only on file systems that keep
/// change times so (``fileSystemsKeepingChangeTimes``). The record is written only for a database whose change time is at least
/// ``minimumAge`` in the past, so a change made after the check cannot fall into the same
/// timestamp tick (file systems store times in ticks of up to a second). What this does not
/// cover (docs/SECURITY.md): someone who can set the system clock back (root), or who writes
/// the block device under the file system; both can also read the device key.
///
/// Format: `KSVRFY01`, the keychain id (16 bytes), the database's device, inode and size
/// (8 bytes each), its change and modification times (seconds and nanoseconds, 8 bytes
/// each), the anchor's keychain id and states (16 + 40 + 1 + 40 bytes), then a keyed BLAKE2b
/// (32 bytes) of everything before it.
final class VerificationRecord {
    static let fileName = "keychain.verified"
    private static let magic = Array("KSVRFY01".utf8)
    private static let macLength = 32
    /// How long ago the database must have last changed for a record to be written
    /// (nanoseconds): more than the coarsest timestamp tick of a Linux file system (one
    /// second), and the kernel's clock tick on top.
    static let minimumAge: Int64 = 2_000_000_000

    /// The values of the database files that a record binds.
    struct DatabaseFiles: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var changedSeconds: Int64
        var changedNanoseconds: Int64
        var modifiedSeconds: Int64
        var modifiedNanoseconds: Int64

        /// The database file at `path` as it is now, or `nil` when the record cannot apply:
        /// the file cannot be examined, or its WAL (`path-wal`) exists and is not empty.
        static func current(databasePath path: String) -> DatabaseFiles? {
            var info = stat()
            if stat(path + "-wal", &info) == 0, info.st_size != 0 { return nil }
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            return DatabaseFiles(
                device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                changedSeconds: Int64(info.st_ctim.tv_sec), changedNanoseconds: Int64(info.st_ctim.tv_nsec),
                modifiedSeconds: Int64(info.st_mtim.tv_sec), modifiedNanoseconds: Int64(info.st_mtim.tv_nsec))
        }

        /// Whether the file last changed at least ``VerificationRecord/minimumAge`` before
        /// `now` (nanoseconds since the epoch) and not after it.
        func isSettled(at now: Int64) -> Bool {
            let changed = changedSeconds &* 1_000_000_000 &+ changedNanoseconds
            return changed <= now && now - changed >= VerificationRecord.minimumAge
        }
    }

    /// File systems on which the kernel sets a file's change time at every change of its
    /// content, a write through a shared mapping included (after the file's pages were
    /// written back: `page_mkwrite` updates the times), and no one can set it: ext4 (and
    /// ext2/3), XFS, Btrfs, F2FS. Not tmpfs (a write through a mapping never changes its
    /// times), not FUSE, SMB, 9p or NFS (times come from a server or a program, and some
    /// report the modification time, which anyone can set, as the change time), not
    /// overlayfs (whose upper layer may be any of those), nor any other.
    /// (An array: four entries, and no set to build when a keychain opens.)
    static let fileSystemsKeepingChangeTimes: [Int64] = [0xEF53, 0x5846_5342, 0x9123_683E, 0xF2F5_2010]

    /// Whether the database at `path` lies on one of ``fileSystemsKeepingChangeTimes``:
    /// elsewhere the record is neither used nor written (every open does the full check).
    static func fileSystemKeepsChangeTimes(databasePath path: String) -> Bool {
        fileSystemsKeepingChangeTimes.contains(Int64(keysmith_file_system_type(path)))
    }

    /// The wall-clock time in nanoseconds since the epoch (the clock file times come from).
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }

    let path: String
    private let directory: URL
    private let key: SecretKey

    init(directory: URL, key: SecretKey) {
        self.directory = directory
        self.path = directory.appendingPathComponent(Self.fileName).path
        self.key = key
    }

    private static let bodyLength = 8 + 16 + 7 * 8 + 16 + 2 * ItemSetState.encodedLength + 1
    static let fileLength = bodyLength + macLength

    /// The record's bytes before the MAC.
    private func body(keychainID: Data, files: DatabaseFiles, anchor: RollbackAnchor.Contents) -> [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(Self.fileLength)
        bytes.append(contentsOf: keychainID)
        for value in [files.device, files.inode] { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        for value in [files.size, files.changedSeconds, files.changedNanoseconds, files.modifiedSeconds, files.modifiedNanoseconds] {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
        bytes.append(contentsOf: anchor.keychainID)
        bytes.append(contentsOf: anchor.committed.encoded)
        bytes.append(anchor.pending == nil ? 0 : 1)
        bytes.append(contentsOf: (anchor.pending ?? ItemSetState(generation: 0, digest: .zero)).encoded)
        return bytes
    }

    private func mac(_ body: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.macLength)
        key.withUnsafeBytes { keyBytes in
            _ = crypto_generichash(
                &out, Self.macLength, body, UInt64(body.count),
                keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), keyBytes.count)
        }
        return out
    }

    /// Whether the record on disk is authentic and binds exactly these values. Any problem
    /// reading it (missing, not a private regular file, wrong length) is a `false`: the
    /// caller then does the full check.
    func vouches(keychainID: Data, files: DatabaseFiles, anchor: RollbackAnchor.Contents) -> Bool {
        guard keychainID.count == 16, anchor.keychainID.count == 16 else { return false }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid(),
            info.st_mode & 0o077 == 0
        else { return false }
        var stored = [UInt8](repeating: 0, count: Self.fileLength + 1)
        let count = stored.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count == Self.fileLength else { return false }
        let expected = body(keychainID: keychainID, files: files, anchor: anchor)
        let expectedMAC = mac(expected)
        // The MAC of what it should say against the stored MAC, and the stored body against
        // what it should say (both constant time): equal only for an authentic record of
        // exactly these values.
        let macMatches = stored.withUnsafeBytes { storedBytes in
            expectedMAC.withUnsafeBytes { sodium_memcmp(storedBytes.baseAddress! + Self.bodyLength, $0.baseAddress!, Self.macLength) == 0 }
        }
        let bodyMatches = stored.withUnsafeBytes { storedBytes in
            expected.withUnsafeBytes { sodium_memcmp(storedBytes.baseAddress!, $0.baseAddress!, Self.bodyLength) == 0 }
        }
        return macMatches && bodyMatches
    }

    /// Writes the record for these values: to a temporary file that is then renamed into
    /// place, so a reader sees the old record or the new one, never part of one. Not synced:
    /// a record lost in a crash only means one more full check. Failures are ignored for the
    /// same reason. What an interrupted write left (`.keychain.verified.PID.RANDOM.tmp`) is
    /// removed first (another process's write in progress then only fails: no record).
    func write(keychainID: Data, files: DatabaseFiles, anchor: RollbackAnchor.Contents) {
        DeviceKeyFile.removeInterruptedCopies(of: directory.appendingPathComponent(Self.fileName))
        var bytes = body(keychainID: keychainID, files: files, anchor: anchor)
        bytes.append(contentsOf: mac(bytes))
        let temporary = directory.appendingPathComponent(
            ".\(Self.fileName).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp").path
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written != bytes.count || rename(temporary, path) != 0 { unlink(temporary) }
    }

    /// Removes the record (the next open does the full check).
    func remove() {
        unlink(path)
    }
}
#endif
