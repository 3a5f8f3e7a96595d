#if !canImport(Security)
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The keychain's root key, kept in a file beside (never inside) the database.
///
/// The file is 0600 in a 0700 directory; a file or directory that others can read is
/// refused with a message that says how to fix it. Creation is atomic across processes:
/// the key is written to a unique temporary file and `link(2)`ed into place, so two
/// processes that open a new keychain at once agree on one key.
///
/// Format: the 8-byte magic `KSDEVK01`, then 32 random bytes.
enum DeviceKeyFile {
    static let magic = Array("KSDEVK01".utf8)

    /// Loads the key at `url`, creating it when it does not exist and `create` is true.
    /// - Throws: ``KeychainFailure`` with the path, the cause and the fix.
    static func loadOrCreate(at url: URL, create: Bool) throws -> SecretKey {
        if let key = try load(at: url) {
            removeInterruptedCopies(of: url)
            return key
        }
        guard create else {
            throw KeychainFailure(
                errSecNotAvailable,
                "The keychain's key file \(url.path) is missing, so its items cannot be decrypted.",
                recovery: "Restore the key file from the backup made with the keychain, or move the keychain aside and start a new one.")
        }
        let key = SecretKey.random()
        var bytes = magic
        key.withUnsafeBytes { bytes.append(contentsOf: $0) }
        defer { bytes.withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) } }
        // EEXIST: another process installed its key first. ENOENT: a process that found the
        // key installed removed this temporary file as an interrupted copy; either way the
        // installed key is loaded below.
        try KeychainFiles.installUnlessPresent(bytes, at: url, naming: "the key file")
        // Another process may have won the race: everybody uses the file that is in place.
        guard let installed = try load(at: url) else {
            throw KeychainFailure(errSecIO, "The key file \(url.path) vanished right after it was created.")
        }
        return installed
    }

    /// Removes `.NAME.PID.RANDOM.tmp` files beside `url` (`.device.key.…`, `.keychain.anchor.…`):
    /// what a process killed between writing a new file and linking it into place (or
    /// before unlinking its temporary name) leaves. For the key, called once the key file is
    /// in place, so no process still needs one (a creator that loses its temporary file
    /// loads the installed key); for the anchor, under the database's write lock, which
    /// every creator holds. Only regular files of this user are removed, and never
    /// overwritten first: one may be a second name of the file itself.
    static func removeInterruptedCopies(of url: URL) {
        let directory = url.deletingLastPathComponent()
        let prefix = ".\(url.lastPathComponent)."
        for name in entryNames(of: directory.path) where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            let middle = name.dropFirst(prefix.count).dropLast(4).split(separator: ".", omittingEmptySubsequences: false)
            guard middle.count == 2, middle.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isNumber) }) else { continue }
            let path = directory.appendingPathComponent(name).path
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else { continue }
            unlink(path)
        }
    }

    /// The names in the directory at `path` (none when it cannot be read), read with
    /// `readdir`: every open looks, and FileManager's listing costs a short-lived process
    /// several times as much.
    private static func entryNames(of path: String) -> [String] {
        guard let stream = opendir(path) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Reads the key at `url`, or `nil` when there is no file.
    static func load(at url: URL) throws -> SecretKey? {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw KeychainFailure(
                errSecNotAvailable, "Cannot open the key file \(url.path): \(String(cString: strerror(errno))).",
                recovery: "Check that the file belongs to this user and is not a symbolic link.")
        }
        defer { close(fd) }
        try KeychainFiles.requirePrivate(fd: fd, path: url.path, kind: "key file")
        var buffer = [UInt8](repeating: 0, count: magic.count + Sodium.keyLength + 1)
        defer { buffer.withUnsafeMutableBytes { Sodium.zero($0.baseAddress, count: $0.count) } }
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count == magic.count + Sodium.keyLength, Array(buffer[0..<magic.count]) == magic else {
            throw KeychainFailure(
                errSecDecode, "The key file \(url.path) is damaged (wrong size or header).",
                recovery: "Restore it from the backup made with the keychain; without it the keychain's items cannot be decrypted.")
        }
        return buffer.withUnsafeBytes {
            SecretKey(copying: UnsafeRawBufferPointer(rebasing: $0[magic.count..<(magic.count + Sodium.keyLength)]))
        }
    }
}

/// File-system rules for keychain files: private directories and files owned by the
/// effective user (as `ssh` requires of its keys), no links.
enum KeychainFiles {
    /// Creates `directory` (0700) when missing, and refuses one that another user owns or
    /// that others can read.
    static func preparePrivateDirectory(_ directory: URL) throws {
        let path = directory.path
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == ENOENT else {
                throw KeychainFailure(
                    errSecNotAvailable, "Cannot inspect the keychain directory \(path): \(String(cString: strerror(errno))).")
            }
            // The directory itself is made by mkdir(2) with mode 0700, so it is private from
            // the moment it exists: another process opening the same new keychain may find
            // it at once, and must not find it readable by others (as a directory made with
            // the default mode and then changed would be, for a moment). Its parents, when
            // missing, get the default mode, as with `mkdir -p`.
            let parent = directory.deletingLastPathComponent()
            let created = (try? FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)) != nil
            guard created, mkdir(path, 0o700) == 0 || errno == EEXIST else {
                throw KeychainFailure(
                    errSecWrPerm, "Cannot create the keychain directory \(path)\(created ? ": \(String(cString: strerror(errno)))" : "").",
                    recovery: "Create it yourself (mkdir -m 700 \(path)) or point KEYSMITH_HOME at a writable directory.")
            }
            // Someone else may have created the directory in the meantime, so what is there
            // now is checked like any existing directory.
            guard stat(path, &info) == 0 else {
                throw KeychainFailure(
                    errSecNotAvailable, "Cannot inspect the keychain directory \(path): \(String(cString: strerror(errno))).")
            }
            if info.st_uid == geteuid(), info.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 {
                throw KeychainFailure(
                    errSecWrPerm, "Cannot make the new keychain directory \(path) private: \(String(cString: strerror(errno))).",
                    recovery: "Run: chmod 700 \(path)")
            }
            if stat(path, &info) != 0 {
                throw KeychainFailure(
                    errSecNotAvailable, "Cannot inspect the keychain directory \(path): \(String(cString: strerror(errno))).")
            }
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw KeychainFailure(
                errSecNotAvailable, "The keychain location \(path) is not a directory.",
                recovery: "Point KEYSMITH_HOME at a directory.")
        }
        try requireOwned(info, path: path, kind: "keychain directory")
        if info.st_mode & 0o077 != 0 {
            throw KeychainFailure(
                errSecWrPerm, "The keychain directory \(path) can be read by other users (mode \(String(info.st_mode & 0o777, radix: 8))).",
                recovery: "Run: chmod 700 \(path)")
        }
    }

    /// Refuses a file or directory that the effective user does not own: its owner could
    /// read (or replace) what is stored in it.
    static func requireOwned(_ info: stat, path: String, kind: String) throws {
        let user = geteuid()
        guard info.st_uid != user else { return }
        throw KeychainFailure(
            errSecWrPerm,
            "The \(kind) \(path) belongs to another user (\(userName(info.st_uid))), who could read what this keychain stores; it is used only when it belongs to \(userName(user)).",
            recovery: "If it is yours, run: chown \(userName(user)) \(path) (as root); otherwise point KEYSMITH_HOME at a directory of your own.")
    }

    /// The login name of `uid`, or `uid N`.
    static func userName(_ uid: uid_t) -> String {
        if let entry = getpwuid(uid), let name = entry.pointee.pw_name { return String(cString: name) }
        return "uid \(uid)"
    }

    /// Refuses an open file that is not a regular file, that another user owns, or that
    /// others can read or write.
    static func requirePrivate(fd: Int32, path: String, kind: String) throws {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw KeychainFailure(errSecNotAvailable, "Cannot inspect the \(kind) \(path).")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw KeychainFailure(
                errSecNotAvailable, "The \(kind) \(path) is not a regular file.",
                recovery: "Move it aside (mv \(path) \(path).aside); keychain files are regular files of this user.")
        }
        try requireOwned(info, path: path, kind: kind)
        if info.st_mode & 0o077 != 0 {
            throw KeychainFailure(
                errSecWrPerm, "The \(kind) \(path) can be read by other users (mode \(String(info.st_mode & 0o777, radix: 8))).",
                recovery: "Run: chmod 600 \(path)")
        }
    }

    /// Refuses a file at `path` (if it exists) that is a link, belongs to another user or
    /// that others can read.
    static func requirePrivateIfPresent(path: String, kind: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return }
            if errno == ELOOP {
                throw KeychainFailure(errSecNotAvailable, "The \(kind) \(path) is a symbolic link; keychain files must be regular files.")
            }
            throw KeychainFailure(errSecNotAvailable, "Cannot open the \(kind) \(path): \(String(cString: strerror(errno))).")
        }
        defer { close(fd) }
        try requirePrivate(fd: fd, path: path, kind: kind)
    }

    /// Writes `bytes` (mode 0600) to a temporary file beside `url`, syncs it, and links it
    /// to `url` unless a file is there already (another process installed its own first:
    /// the caller reads whatever is in place); the directory entry is synced.
    /// - Parameters:
    ///   - bytes: The file's contents.
    ///   - url: Where the file goes.
    ///   - what: The file's name for people, in errors ("the key file").
    /// - Throws: errSecWrPerm when the temporary file cannot be made, errSecIO when writing
    ///   or linking fails.
    static func installUnlessPresent(_ bytes: [UInt8], at url: URL, naming what: String) throws {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw KeychainFailure(
                errSecWrPerm, "Cannot create \(what) in \(url.deletingLastPathComponent().path): \(String(cString: strerror(errno))).",
                recovery: "Check that the keychain directory exists and is writable by this user.")
        }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        defer { unlink(temporary.path) }
        guard written == bytes.count, synced == 0 else {
            throw KeychainFailure(
                errSecIO, "Writing \(what) \(url.path) failed: \(String(cString: strerror(errno))).",
                recovery: "Check free disk space and permissions of the keychain directory.")
        }
        // EEXIST: another process installed its file first; ENOENT: another process removed
        // this temporary file as an interrupted copy. Either way the file in place is used.
        if link(temporary.path, url.path) != 0 && errno != EEXIST && errno != ENOENT {
            throw KeychainFailure(
                errSecIO, "Installing \(what) \(url.path) failed: \(String(cString: strerror(errno))).",
                recovery: "Check permissions of the keychain directory.")
        }
        syncDirectory(url.deletingLastPathComponent())
    }

    /// Makes a directory entry change durable.
    static func syncDirectory(_ directory: URL) {
        let fd = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
#endif
