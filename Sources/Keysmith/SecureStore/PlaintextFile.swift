import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A plaintext key file being migrated, and the safe way to rewrite it.
///
/// - A symbolic link is followed: the real file is read and rewritten (or deleted), and the
///   link is kept (or removed with the file). Rewriting the link's path instead would put a
///   new file where the link was and leave the secrets in the real file.
/// - A file with several hard links, a file that is not a regular file, and a file owned by
///   another user (unless the process is root, which can give the new contents the same
///   owner) are refused before anything is migrated.
/// - The rewrite is atomic and keeps what protects the file: a temporary file is created
///   beside the real one (mode 0600, exclusive, not following links), given the file's
///   owner, group and mode, written, flushed to disk, renamed over the file, and the
///   directory is flushed.
struct PlaintextFile {
    /// Why a file operation failed: the call and `strerror`, never file contents.
    struct Failure: Error {
        let reason: String
    }

    /// The path the caller gave.
    let url: URL
    /// The file that holds the data (the link's target, or `url` itself).
    let realPath: String
    /// Whether `url` is a symbolic link.
    let isLink: Bool
    /// The file's bytes when it was opened.
    let contents: Data
    private let mode: mode_t
    private let owner: uid_t
    private let group: gid_t

    /// Checks and reads `url`; `nil` when there is no file there.
    /// - Throws: ``SecureStoreError`` with code ``SecureStoreError/Code/invalidValue`` for a
    ///   file that cannot be migrated safely, ``SecureStoreError/Code/unknown`` when it cannot
    ///   be read.
    static func open(_ url: URL, namespace: String) throws(SecureStoreError) -> PlaintextFile? {
        let name = url.lastPathComponent
        var linkInfo = stat()
        guard lstat(url.path, &linkInfo) == 0 else {
            if errno == ENOENT { return nil }
            throw SecureStoreError(
                .unknown, message: "The file '\(name)' cannot be examined (\(currentError("lstat"))).", namespace: namespace)
        }
        let isLink = (linkInfo.st_mode & S_IFMT) == S_IFLNK
        var realPath = url.path
        if isLink {
            guard let resolved = realpath(url.path, nil) else {
                if errno == ENOENT { return nil }  // a dangling link: nothing to migrate
                throw SecureStoreError(
                    .unknown, message: "The link '\(name)' cannot be followed (\(currentError("realpath"))).",
                    namespace: namespace)
            }
            realPath = String(cString: resolved)
            free(resolved)
        }
        var info = stat()
        guard stat(realPath, &info) == 0 else {
            throw SecureStoreError(
                .unknown, message: "The file '\(name)' cannot be examined (\(currentError("stat"))).", namespace: namespace)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw SecureStoreError(
                .invalidValue, message: "'\(name)' is not a regular file; pass the path of the key file itself.",
                namespace: namespace)
        }
        guard info.st_nlink == 1 else {
            throw SecureStoreError(
                .invalidValue,
                message: "The file '\(name)' has \(info.st_nlink) names (hard links): removing secrets from one name "
                    + "would leave them under the others. Remove the other links (find them with "
                    + "`find / -samefile \(realPath)`), then migrate again. Nothing was migrated.",
                namespace: namespace)
        }
        let me = geteuid()
        guard info.st_uid == me || me == 0 else {
            throw SecureStoreError(
                .invalidValue,
                message: "The file '\(name)' belongs to user \(info.st_uid), not to this process (user \(me)): rewriting "
                    + "it would give it a new owner. Run the migration as its owner. Nothing was migrated.",
                namespace: namespace)
        }
        guard let contents = FileManager.default.contents(atPath: realPath) else {
            throw SecureStoreError(
                .unknown, message: "The file '\(name)' cannot be read; check its permissions. Nothing was migrated.",
                namespace: namespace)
        }
        return PlaintextFile(
            url: url, realPath: realPath, isLink: isLink, contents: contents, mode: info.st_mode & 0o7777,
            owner: info.st_uid, group: info.st_gid)
    }

    /// Replaces the file's contents atomically, keeping its mode, owner and group; `nil`
    /// deletes the file (and the link that pointed to it).
    /// - Throws: ``Failure`` naming the call that failed; the file is then unchanged.
    func replace(with data: Data?) throws {
        guard let data else {
            guard unlink(realPath) == 0 || errno == ENOENT else { throw PlaintextFile.failure("unlink") }
            if isLink, unlink(url.path) != 0, errno != ENOENT { throw PlaintextFile.failure("unlink") }
            syncDirectory(of: realPath)
            return
        }
        let directory = (realPath as NSString).deletingLastPathComponent
        let name = (realPath as NSString).lastPathComponent
        let temporary = (directory as NSString).appendingPathComponent(".\(name).keysmith-\(UUID().uuidString.prefix(8))")
        let descriptor = openDescriptor(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw PlaintextFile.failure("open") }
        var committed = false
        defer {
            if descriptor >= 0 { close(descriptor) }
            if !committed { unlink(temporary) }
        }
        if fchown(descriptor, owner, group) != 0 { throw PlaintextFile.failure("fchown") }
        if fchmod(descriptor, mode) != 0 { throw PlaintextFile.failure("fchmod") }
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) throws in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw PlaintextFile.failure("write")
                }
                offset += written
            }
        }
        if fsync(descriptor) != 0 { throw PlaintextFile.failure("fsync") }
        if rename(temporary, realPath) != 0 { throw PlaintextFile.failure("rename") }
        committed = true
        syncDirectory(of: realPath)
    }

    /// The reason of a failed rewrite, for messages.
    static func reason(_ error: any Error) -> String {
        if let failure = error as? Failure { return failure.reason }
        return "it could not be serialized"
    }

    private static func failure(_ call: String) -> Failure {
        Failure(reason: currentError(call))
    }

    private static func currentError(_ call: String) -> String {
        "\(call): \(String(cString: strerror(errno)))"
    }

    /// Flushes a directory entry change (rename, unlink) to disk, best effort.
    private func syncDirectory(of path: String) {
        let directory = openDescriptor((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard directory >= 0 else { return }
        _ = fsync(directory)
        close(directory)
    }
}

/// `open(2)` with a mode, under a name that does not clash with ``PlaintextFile/open(_:namespace:)``.
private func openDescriptor(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Darwin)
        return Darwin.open(path, flags, mode)
    #elseif canImport(Musl)
        return Musl.open(path, flags, mode)
    #else
        return Glibc.open(path, flags, mode)
    #endif
}
