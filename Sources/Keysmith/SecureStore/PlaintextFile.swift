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
/// - The file's directory is opened once, when the file is read, and every later step works
///   in that directory (`openat`, `renameat`, `unlinkat`): a path that is changed meanwhile
///   (a directory replaced by a link to `/etc`, say) cannot redirect the rewrite.
/// - The rewrite happens only if the file is still the one that was read (same file, size
///   and modification time); a file changed meanwhile is left alone and the migration says
///   so, so an edit made during the migration is never overwritten with the stale copy.
/// - The rewrite is atomic and keeps what protects the file: a temporary file is created
///   beside the real one (mode 0600, exclusive, not following links), given the file's
///   owner, group and mode, written, flushed to disk, renamed over the file, and the
///   directory is flushed.
final class PlaintextFile {
    /// Why a file operation failed: the call and `strerror`, never file contents.
    struct Failure: Error {
        let reason: String
    }

    /// What identifies the file as read: the same file, not changed since.
    private struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64
        let size: Int64
        let modified: Int64
        let modifiedNanoseconds: Int64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            #if canImport(Darwin)
                modified = Int64(info.st_mtimespec.tv_sec)
                modifiedNanoseconds = Int64(info.st_mtimespec.tv_nsec)
            #else
                modified = Int64(info.st_mtim.tv_sec)
                modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
            #endif
        }
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
    private let identity: Identity
    /// The directory of the real file, opened when the file was read.
    private let directory: Int32
    /// The real file's name in ``directory``.
    private let name: String
    /// For a link: the link's directory, opened when the file was read, and its name there.
    private let link: (directory: Int32, name: String, inode: UInt64)?

    private init(
        url: URL, realPath: String, contents: Data, info: stat, directory: Int32, name: String,
        link: (directory: Int32, name: String, inode: UInt64)?
    ) {
        self.url = url
        self.realPath = realPath
        self.isLink = link != nil
        self.contents = contents
        self.mode = info.st_mode & 0o7777
        self.owner = info.st_uid
        self.group = info.st_gid
        self.identity = Identity(info)
        self.directory = directory
        self.name = name
        self.link = link
    }

    deinit {
        close(directory)
        if let link { close(link.directory) }
    }

    /// Checks and reads `url`; `nil` when there is no file there.
    /// - Throws: ``SecureStoreError`` with code ``SecureStoreError/Code/invalidValue`` for a
    ///   file that cannot be migrated safely, ``SecureStoreError/Code/unknown`` when it cannot
    ///   be read.
    static func open(_ url: URL, namespace: String) throws(SecureStoreError) -> PlaintextFile? {
        let displayName = url.lastPathComponent
        func cannot(_ what: String, _ call: String) -> SecureStoreError {
            SecureStoreError(
                .unknown, message: "\(what) (\(currentError(call))). Nothing was migrated.", namespace: namespace,
                fix: "Check the path and the permissions of the file and its folder, then migrate again.")
        }
        var linkInfo = stat()
        guard lstat(url.path, &linkInfo) == 0 else {
            if errno == ENOENT { return nil }
            throw cannot("The file '\(displayName)' cannot be examined", "lstat")
        }
        var realPath = url.path
        var link: (directory: Int32, name: String, inode: UInt64)?
        if (linkInfo.st_mode & S_IFMT) == S_IFLNK {
            let linkDirectory = openDescriptor(
                (url.path as NSString).deletingLastPathComponent.nonEmptyPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
            guard linkDirectory >= 0 else { throw cannot("The folder of the link '\(displayName)' cannot be opened", "open") }
            link = (linkDirectory, url.lastPathComponent, UInt64(linkInfo.st_ino))
            guard let resolved = realpath(url.path, nil) else {
                close(linkDirectory)
                if errno == ENOENT { return nil }  // a dangling link: nothing to migrate
                throw cannot("The link '\(displayName)' cannot be followed", "realpath")
            }
            realPath = String(cString: resolved)
            free(resolved)
        }
        let closeLink = { if let link { close(link.directory) } }
        let name = (realPath as NSString).lastPathComponent
        let directory = openDescriptor(
            (realPath as NSString).deletingLastPathComponent.nonEmptyPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard directory >= 0 else {
            closeLink()
            throw cannot("The folder of '\(displayName)' cannot be opened", "open")
        }
        // From here on, everything happens in that directory: the file is opened without
        // following a link, and what is checked is what is read.
        let descriptor = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let failure = errno == ELOOP
                ? SecureStoreError(
                    .invalidValue, message: "'\(displayName)' changed into a link while it was opened; migrate again.",
                    namespace: namespace)
                : cannot("The file '\(displayName)' cannot be opened", "open")
            close(directory)
            closeLink()
            throw failure
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            close(directory)
            closeLink()
            throw cannot("The file '\(displayName)' cannot be examined", "fstat")
        }
        var refusal: String?
        let me = geteuid()
        if (info.st_mode & S_IFMT) != S_IFREG {
            refusal = "'\(displayName)' is not a regular file; pass the path of the key file itself."
        } else if info.st_nlink != 1 {
            refusal = "The file '\(displayName)' has \(info.st_nlink) names (hard links): removing secrets from one name "
                + "would leave them under the others. Remove the other links (find them with "
                + "`find / -samefile \(realPath)`), then migrate again. Nothing was migrated."
        } else if info.st_uid != me && me != 0 {
            refusal = "The file '\(displayName)' belongs to user \(info.st_uid), not to this process (user \(me)): rewriting "
                + "it would give it a new owner. Run the migration as its owner. Nothing was migrated."
        }
        if let refusal {
            close(directory)
            closeLink()
            throw SecureStoreError(.invalidValue, message: refusal, namespace: namespace)
        }
        guard let contents = try? FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).readToEnd() ?? Data() else {
            close(directory)
            closeLink()
            throw SecureStoreError(
                .unknown, message: "The file '\(displayName)' cannot be read. Nothing was migrated.", namespace: namespace,
                fix: "Check the file's permissions, then migrate again.")
        }
        return PlaintextFile(
            url: url, realPath: realPath, contents: contents, info: info, directory: directory, name: name, link: link)
    }

    /// Replaces the file's contents atomically, keeping its mode, owner and group; `nil`
    /// deletes the file (and the link that pointed to it).
    /// - Throws: ``Failure`` naming the call that failed, or saying that the file changed
    ///   since it was read; the file is then unchanged.
    func replace(with data: Data?) throws {
        guard let data else {
            try checkUnchanged()
            guard unlinkat(directory, name, 0) == 0 || errno == ENOENT else { throw PlaintextFile.failure("unlink") }
            if let link {
                var info = stat()
                // Only the link that was followed, still in its place.
                if fstatat(link.directory, link.name, &info, AT_SYMLINK_NOFOLLOW) == 0,
                    (info.st_mode & S_IFMT) == S_IFLNK, UInt64(info.st_ino) == link.inode,
                    unlinkat(link.directory, link.name, 0) != 0, errno != ENOENT
                {
                    throw PlaintextFile.failure("unlink")
                }
                _ = fsync(link.directory)
            }
            _ = fsync(directory)
            return
        }
        let temporary = ".\(name).keysmith-\(UUID().uuidString.prefix(8))"
        let descriptor = openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw PlaintextFile.failure("open") }
        var committed = false
        defer {
            close(descriptor)
            if !committed { unlinkat(directory, temporary, 0) }
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
        try checkUnchanged()
        if renameat(directory, temporary, directory, name) != 0 { throw PlaintextFile.failure("rename") }
        committed = true
        _ = fsync(directory)
    }

    /// Throws unless the file in the directory is still the file that was read, unchanged.
    private func checkUnchanged() throws {
        var info = stat()
        guard fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { throw PlaintextFile.failure("stat") }
        guard Identity(info) == identity else {
            throw Failure(
                reason: "the file changed while it was being migrated; it was left as it is now, nothing in it was lost")
        }
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
}

extension String {
    /// The path itself, or `.` for the empty path of a file in the current directory.
    fileprivate var nonEmptyPath: String { isEmpty ? "." : self }
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
