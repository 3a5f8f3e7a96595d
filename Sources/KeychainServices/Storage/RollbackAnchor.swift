#if !canImport(Security)
import CSodium
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The state of a keychain's item set: a generation counter, advanced by every write, and
/// a keyed digest of every row.
///
/// The digest is a multiset hash: the sum modulo 2^256 of a keyed BLAKE2b of each row
/// (every column, the row id included). A write updates it by adding the new rows' values
/// and subtracting the old ones', so it costs two hashes per changed row, whatever the
/// size of the keychain; a full recomputation checks it. Without the key nobody can
/// compute a row's value, so no edit of rows (one written back, one deleted, one added)
/// keeps the sum.
struct ItemSetState: Equatable {
    var generation: UInt64
    var digest: ItemSetDigest

    static let encodedLength = 8 + ItemSetDigest.length

    var encoded: Data {
        var data = Data()
        withUnsafeBytes(of: generation.littleEndian) { data.append(contentsOf: $0) }
        data.append(digest.bytes)
        return data
    }

    init(generation: UInt64, digest: ItemSetDigest) {
        self.generation = generation
        self.digest = digest
    }

    init?(encoded data: Data) {
        guard data.count == Self.encodedLength else { return nil }
        // Read in place (it is read before every keychain read): no intermediate arrays.
        (generation, digest) = data.withUnsafeBytes { bytes in
            (UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self)),
             ItemSetDigest(unsafeBytes: UnsafeRawBufferPointer(rebasing: bytes[8...])))
        }
    }
}

/// A 256-bit sum of row values (four little-endian 64-bit limbs), added and subtracted
/// modulo 2^256.
struct ItemSetDigest: Equatable {
    static let length = 32
    private(set) var limbs: [UInt64] = [0, 0, 0, 0]

    static let zero = ItemSetDigest()

    init() {}

    init<Bytes: Collection<UInt8>>(bytes: Bytes) {
        let array = [UInt8](bytes)
        precondition(array.count == Self.length)
        for limb in 0..<4 {
            var value: UInt64 = 0
            for byte in 0..<8 { value |= UInt64(array[limb * 8 + byte]) << (8 * UInt64(byte)) }
            limbs[limb] = value
        }
    }

    /// The digest in `bytes` (exactly ``length`` bytes, four little-endian limbs).
    init(unsafeBytes bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == Self.length)
        limbs = (0..<4).map { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)) }
    }

    var bytes: Data {
        var data = Data(capacity: Self.length)
        for limb in limbs { withUnsafeBytes(of: limb.littleEndian) { data.append(contentsOf: $0) } }
        return data
    }

    mutating func add(_ other: ItemSetDigest) {
        var carry = false
        for index in 0..<4 {
            let (sum, overflow1) = limbs[index].addingReportingOverflow(other.limbs[index])
            let (total, overflow2) = sum.addingReportingOverflow(carry ? 1 : 0)
            limbs[index] = total
            carry = overflow1 || overflow2
        }
    }

    mutating func subtract(_ other: ItemSetDigest) {
        var borrow = false
        for index in 0..<4 {
            let (difference, overflow1) = limbs[index].subtractingReportingOverflow(other.limbs[index])
            let (total, overflow2) = difference.subtractingReportingOverflow(borrow ? 1 : 0)
            limbs[index] = total
            borrow = overflow1 || overflow2
        }
    }
}

/// `keychain.anchor`: the item-set state kept beside the device key, outside the
/// database, so that a database file written back to an older state (by a restore, a
/// sync tool, anyone who can write that file alone) no longer matches it.
///
/// The file holds the last committed state and, while a write is under way, the state it
/// is about to commit; a database in either state is accepted, so a process killed at any
/// point leaves a keychain that opens. All writes of the file happen under SQLite's write
/// lock of the database, in place (one sector-sized write, synced before a commit).
///
/// With the TPM key store, the anchor is also bound to a TPM NV monotonic counter
/// (``TPM2RollbackCounter``): it records the counter's handle and the value it holds (or is
/// about to hold), so an older anchor put back with its database is older than the counter.
///
/// Format: `KSANCH01`, the keychain id (16 bytes), the committed state (8 + 32 bytes), a
/// flag byte and the pending state (8 + 32 bytes, zeros when none), then a keyed BLAKE2b
/// (32 bytes) of everything before it, under a key derived from the device key. Bound to a
/// TPM counter: `KSANCH02` and the same fields, then the counter's NV handle (4 bytes), its
/// value (8 bytes) and the time of its last increment (seconds since 1970, 8 bytes), all
/// little-endian, then the MAC.
final class RollbackAnchor {
    static let fileName = "keychain.anchor"
    static let resetFileName = "keychain.anchor.reset"
    private static let magic = Array("KSANCH01".utf8)
    private static let counterMagic = Array("KSANCH02".utf8)
    private static let macLength = 32
    private static let bodyLength = 8 + 16 + ItemSetState.encodedLength + 1 + ItemSetState.encodedLength
    private static let counterBodyLength = bodyLength + 4 + 8 + 8
    /// The length of an anchor without a TPM counter.
    static let fileLength = bodyLength + macLength
    /// The length of an anchor bound to a TPM counter.
    static let counterFileLength = counterBodyLength + macLength
    private static let maximumFileLength = counterFileLength

    /// What the file says.
    struct Contents: Equatable {
        var keychainID: Data
        var committed: ItemSetState
        var pending: ItemSetState?
        /// The TPM counter the anchor is bound to (TPM key store only).
        var counter: CounterBinding? = nil

        func accepts(_ state: ItemSetState) -> Bool { state == committed || state == pending }

        var newestGeneration: UInt64 { max(committed.generation, pending?.generation ?? 0) }
    }

    /// The TPM NV counter an anchor records: its handle, the value it holds (or, while an
    /// increment is under way, is about to hold: the anchor is written first), and when the
    /// anchor last incremented it (wall-clock seconds, for the epoch).
    struct CounterBinding: Equatable {
        var handle: UInt32
        var value: UInt64
        var incrementedAt: Int64
    }

    /// The TPM counter this keychain's anchor is bound to, `nil` unless it uses the TPM key
    /// store.
    let counter: TPM2RollbackCounter?

    let url: URL
    /// Counts the write transactions of this process's connections to the anchored
    /// database (every connection of one engine shares its anchor): bumped after each one
    /// ends, committed or not. A read connection's search cache (``SearchCache``) is used
    /// only while it has the value it had when the cache was filled.
    let writeEpoch = Atomic<UInt64>(0)
    /// `url.path`, computed once: reads open the file by it before every keychain read.
    let path: String
    let directory: URL
    private let key: SecretKey

    /// BLAKE2b state for row values (the type is opaque to Swift: 64-byte aligned memory).
    /// Used with the engine's lock held.
    private let hashStateMemory = UnsafeMutableRawPointer.allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)
    private var hashState: OpaquePointer { OpaquePointer(hashStateMemory) }

    init(directory: URL, key: SecretKey, counter: TPM2RollbackCounter? = nil) {
        self.directory = directory
        self.url = directory.appendingPathComponent(Self.fileName)
        self.path = url.path
        self.key = key
        self.counter = counter
    }

    /// The same anchor (file, key and counter) with a hash state of its own, for a
    /// connection used on another thread than the engine's (the key hierarchy's).
    func copy() -> RollbackAnchor {
        RollbackAnchor(directory: directory, key: key.withUnsafeBytes { SecretKey(copying: $0) }, counter: counter)
    }

    deinit {
        Sodium.zero(hashStateMemory, count: crypto_generichash_statebytes())
        hashStateMemory.deallocate()
    }

    var resetRequestPath: String { directory.appendingPathComponent(Self.resetFileName).path }

    // MARK: Row values

    /// The keyed value of one row: `fields` calls its argument with each column as stored,
    /// in the order id, class, pk, h1, h2, agrp, sync, pdmn, ref, nonce, ciphertext, and h3
    /// when the row has one (each hashed with its length in front, the id and sync flag as
    /// 8-byte integers).
    func value(_ fields: ((UnsafeRawBufferPointer) -> Void) -> Void) -> ItemSetDigest {
        let state = hashState
        key.withUnsafeBytes { keyBytes in
            _ = crypto_generichash_init(
                state, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), keyBytes.count, ItemSetDigest.length)
        }
        func feed(_ bytes: UnsafeRawBufferPointer) {
            var length = UInt64(bytes.count).littleEndian
            withUnsafeBytes(of: &length) {
                _ = crypto_generichash_update(state, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), 8)
            }
            if let base = bytes.baseAddress, bytes.count > 0 {
                _ = crypto_generichash_update(state, base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
            }
        }
        Self.rowDomain.withUnsafeBytes { feed($0) }
        fields(feed)
        var out = [UInt8](repeating: 0, count: ItemSetDigest.length)
        _ = crypto_generichash_final(state, &out, ItemSetDigest.length)
        return ItemSetDigest(bytes: out)
    }

    private static let rowDomain = Array("keysmith.row.v1".utf8)

    // MARK: The file

    /// Reads the anchor, or `nil` when there is none. (Three system calls and one keyed
    /// hash: it is read afresh every time.)
    /// - Throws: ``KeychainFailure`` when it is damaged, not this keychain's, or unsafe. A
    ///   reader without the write lock may see a write half-way; callers judge such a
    ///   failure again under the lock.
    func read() throws -> Contents? {
        guard let fd = try openPrivate() else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: Self.maximumFileLength + 1)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count == Self.fileLength || count == Self.counterFileLength else { throw damaged() }
        return try bytes.withUnsafeBytes { try contents(of: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    /// Opens the anchor file for reading (not following a link) and checks that it is a
    /// private regular file of this user; `nil` when there is none.
    private func openPrivate() throws -> Int32? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw KeychainFailure(
                errSecNotAvailable, "Cannot open the keychain's anchor file \(url.path): \(String(cString: strerror(errno))).",
                recovery: "Check that the file belongs to this user and is not a symbolic link.")
        }
        do {
            try KeychainFiles.requirePrivate(fd: fd, path: path, kind: "anchor file")
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Authenticates and parses the whole file's bytes (exactly ``fileLength``, or
    /// ``counterFileLength`` for an anchor bound to a TPM counter).
    private func contents(of bytes: UnsafeRawBufferPointer) throws -> Contents {
        let hasCounter = bytes.count == Self.counterFileLength
        guard bytes.count == Self.fileLength || hasCounter,
            bytes.prefix(8).elementsEqual(hasCounter ? Self.counterMagic : Self.magic)
        else { throw damaged() }
        let bodyLength = hasCounter ? Self.counterBodyLength : Self.bodyLength
        // Copied from the pointer, not as a sequence of bytes (whose generic conversion costs
        // the Swift runtime a conformance scan once in each process, so at every run of a
        // tool). The length was checked above, so the base address is not nil.
        let body = Data(bytes: bytes.baseAddress!, count: bodyLength)
        let mac = Data(bytes: bytes.baseAddress! + bodyLength, count: Self.macLength)
        guard Sodium.constantTimeEqual(authenticator(body), mac) else { throw damaged() }
        var offset = 8
        func take(_ length: Int) -> Data {
            defer { offset += length }
            return body.subdata(in: offset..<(offset + length))
        }
        let keychainID = take(16)
        guard let committed = ItemSetState(encoded: take(ItemSetState.encodedLength)) else { throw damaged() }
        let hasPending = take(1).first == 1
        let pendingState = ItemSetState(encoded: take(ItemSetState.encodedLength))
        var counter: CounterBinding?
        if hasCounter {
            func integer<Value: FixedWidthInteger>(_ type: Value.Type) -> Value {
                take(MemoryLayout<Value>.size).reversed().reduce(Value(0)) { $0 << 8 | Value($1) }
            }
            counter = CounterBinding(handle: integer(UInt32.self), value: integer(UInt64.self), incrementedAt: integer(Int64.self))
        }
        return Contents(keychainID: keychainID, committed: committed, pending: hasPending ? pendingState : nil, counter: counter)
    }

    // MARK: The file, kept open by a reader

    /// The anchor file as one read connection last authenticated it, kept open between
    /// reads so that the next read can tell, without authenticating it again, that the
    /// file at the anchor's path is still this one and still holds these bytes.
    ///
    /// Used by one thread at a time (the connection's).
    final class Snapshot {
        /// The file, open: while it is open its inode cannot be freed, so no other file on
        /// its device can get its inode number.
        fileprivate let fd: Int32
        /// `fstat` of `fd` when it was read (device, inode, size, change and modification
        /// times in nanoseconds).
        fileprivate let identity: FileIdentity
        /// The bytes that were authenticated (`length` of them), and room for one more byte
        /// (a longer file is a changed file) to read the file into when comparing.
        fileprivate let authenticated: UnsafeMutableRawBufferPointer
        fileprivate let scratch: UnsafeMutableRawBufferPointer
        /// How many bytes were authenticated (``fileLength`` or ``counterFileLength``).
        fileprivate let length: Int
        /// What those bytes say.
        let contents: Contents

        fileprivate init(fd: Int32, identity: FileIdentity, bytes: UnsafeMutableRawBufferPointer, length: Int, contents: Contents) {
            self.fd = fd
            self.identity = identity
            self.authenticated = bytes
            self.length = length
            self.scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: RollbackAnchor.maximumFileLength + 1, alignment: 8)
            self.contents = contents
        }

        deinit {
            close(fd)
            authenticated.deallocate()
            scratch.deallocate()
        }
    }

    /// Device, inode, size and the change and modification times (nanoseconds) of a file.
    fileprivate struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var changed: (Int, Int)
        var modified: (Int, Int)

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            changed = (info.st_ctim.tv_sec, info.st_ctim.tv_nsec)
            modified = (info.st_mtim.tv_sec, info.st_mtim.tv_nsec)
        }

        static func == (a: FileIdentity, b: FileIdentity) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size && a.changed == b.changed
                && a.modified == b.modified
        }
    }

    /// Opens, reads and authenticates the anchor file, and keeps it open (see
    /// ``Snapshot``); `nil` when there is none.
    /// - Throws: as ``read()``.
    func snapshot() throws -> Snapshot? {
        guard let fd = try openPrivate() else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw damaged()
        }
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.maximumFileLength + 1, alignment: 8)
        let count = pread(fd, bytes.baseAddress, bytes.count, 0)
        do {
            guard count == Self.fileLength || count == Self.counterFileLength else { throw damaged() }
            let contents = try contents(of: UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
            return Snapshot(fd: fd, identity: FileIdentity(info), bytes: bytes, length: count, contents: contents)
        } catch {
            close(fd)
            bytes.deallocate()
            throw error
        }
    }

    /// Whether the anchor's path still names `snapshot`'s file, unchanged:
    /// ``pathNamesFile(of:)`` and ``fileHoldsAuthenticatedBytes(of:)``. (Two system calls
    /// and a comparison of 137 bytes, where reading it afresh takes four, a keyed hash and
    /// the parsing.)
    ///
    /// `false` means "read it afresh" (``snapshot()``), not "damaged".
    func isUnchanged(_ snapshot: Snapshot) -> Bool {
        pathNamesFile(of: snapshot) && fileHoldsAuthenticatedBytes(of: snapshot)
    }

    /// Whether an `lstat` of the anchor's path finds `snapshot`'s file (same device and
    /// inode, which no other file can have while the snapshot keeps it open; and the same
    /// size, change and modification times), still a private regular file of this user.
    func pathNamesFile(of snapshot: Snapshot) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && info.st_uid == geteuid()
            && info.st_mode & 0o077 == 0 && FileIdentity(info) == snapshot.identity
    }

    /// Whether `snapshot`'s open file holds, now, exactly the bytes that were
    /// authenticated (and nothing after them). Reading through the open file sees every
    /// write made to it in place, whatever its timestamps say.
    func fileHoldsAuthenticatedBytes(of snapshot: Snapshot) -> Bool {
        let count = pread(snapshot.fd, snapshot.scratch.baseAddress, snapshot.scratch.count, 0)
        guard count == snapshot.length else { return false }
        return memcmp(snapshot.scratch.baseAddress!, snapshot.authenticated.baseAddress!, snapshot.length) == 0
    }

    /// Writes the anchor in place: one write of fewer than 512 bytes at the start of the
    /// file, within one disk sector, so a crash leaves the old record or the new one.
    /// `durable`: synced before this returns (needed before a commit; a lost finalization
    /// only leaves the previous, still accepted, record).
    ///
    /// A missing file is made whole before it gets its name: written to
    /// `.keychain.anchor.PID.RANDOM.tmp`, synced and linked into place, so a process killed
    /// (or a machine that loses power) while creating it never leaves an empty or short
    /// anchor, which would refuse a keychain that nobody changed. Called with the
    /// database's write lock held, so no other process is creating one at the same time;
    /// the first write of each open keychain removes copies that an interrupted creation
    /// left.
    func write(_ contents: Contents, durable: Bool) throws {
        var body = Data(contents.counter == nil ? Self.magic : Self.counterMagic)
        body.append(contents.keychainID)
        body.append(contents.committed.encoded)
        body.append(contents.pending == nil ? 0 : 1)
        body.append((contents.pending ?? ItemSetState(generation: 0, digest: .zero)).encoded)
        if let counter = contents.counter {
            withUnsafeBytes(of: counter.handle.littleEndian) { body.append(contentsOf: $0) }
            withUnsafeBytes(of: counter.value.littleEndian) { body.append(contentsOf: $0) }
            withUnsafeBytes(of: counter.incrementedAt.littleEndian) { body.append(contentsOf: $0) }
        }
        body.append(authenticator(body))
        if !removedInterruptedCopies {
            removedInterruptedCopies = true
            DeviceKeyFile.removeInterruptedCopies(of: url)
        }
        let fd = open(url.path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 && errno == ENOENT {
            try create(body)
            return
        }
        guard fd >= 0 else { throw writeFailure() }
        defer { close(fd) }
        try KeychainFiles.requirePrivate(fd: fd, path: url.path, kind: "anchor file")
        let written = body.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == body.count else { throw writeFailure() }
        if durable, fdatasync(fd) != 0 { throw writeFailure() }
    }

    /// Whether this process already removed what interrupted creations left.
    private var removedInterruptedCopies = false

    /// Creates the anchor file with `body` in it, whole, under its final name.
    private func create(_ body: Data) throws {
        let temporary = directory.appendingPathComponent(
            ".\(Self.fileName).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp").path
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw writeFailure() }
        defer { unlink(temporary) }
        let written = body.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        let synced = fdatasync(fd)
        close(fd)
        guard written == body.count, synced == 0 else { throw writeFailure() }
        guard link(temporary, url.path) == 0 else { throw writeFailure() }
        KeychainFiles.syncDirectory(directory)
    }

    private func writeFailure() -> KeychainFailure {
        KeychainFailure(
            errSecIO, "Cannot write the keychain's anchor file \(url.path): \(String(cString: strerror(errno))).",
            recovery: errno == ELOOP
                ? "The anchor file is a symbolic link; keychain files must be regular files of this user. Nothing was changed."
                : "Check free disk space and permissions of the keychain directory; nothing was changed.")
    }

    private func authenticator(_ body: Data) -> Data {
        var out = Data(count: Self.macLength)
        out.withUnsafeMutableBytes { outBuffer in
            body.withUnsafeBytes { input in
                key.withUnsafeBytes { keyBytes in
                    _ = crypto_generichash(
                        outBuffer.baseAddress!.assumingMemoryBound(to: UInt8.self), Self.macLength,
                        input.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(input.count),
                        keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), keyBytes.count)
                }
            }
        }
        return out
    }

    // MARK: Failures

    private func damaged() -> KeychainFailure {
        KeychainFailure(
            errSecDecode,
            "The keychain's anchor file \(url.path) is damaged or was not written with this keychain's key, so the database cannot be checked against it (it may have been rolled back).",
            recovery: acceptRecovery)
    }

    /// The way out, for an owner who restored or changed the files on purpose.
    var acceptRecovery: String {
        "If you restored or replaced the keychain's files yourself and want to use the database as it is now, run: touch \(resetRequestPath) (the next open accepts it and removes that file); otherwise restore keychain.db and keychain.anchor together from the same backup."
    }

    /// The database does not match its anchor.
    func rolledBack(_ detail: String) -> KeychainFailure {
        KeychainFailure(
            errSecDecode,
            "The keychain database in \(directory.path) was rolled back or changed outside Keysmith: \(detail) No data is returned from it.",
            recovery: acceptRecovery)
    }
}
#endif
