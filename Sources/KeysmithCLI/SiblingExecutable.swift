import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An executable installed beside `keysmith` that takes over a command line: `keysmith-fleet`
/// (the etcd client) and `keysmith-secret-service` (sd-bus and libcrypto). The `keysmith`
/// process replaces itself with it (exec, same arguments, environment, standard streams and
/// exit status), so `keysmith` itself never loads those libraries.
enum SiblingExecutable {
    /// `name` in the directory of the running executable, or `nil` when that directory cannot
    /// be found.
    static func path(of name: String) -> String? {
        #if os(Linux)
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let executable = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #else
        guard let executable = Bundle.main.executableURL?.resolvingSymlinksInPath().path else { return nil }
        #endif
        guard let slash = executable.lastIndex(of: "/") else { return nil }
        return String(executable[...slash]) + name
    }

    /// Replaces this process with the executable at `path`, given `processArguments` (program
    /// name first). Returns only when that fails.
    /// - Returns: Why it could not be started (the system's words).
    static func execute(_ path: String, processArguments: [String]) -> String {
        var argv: [UnsafeMutablePointer<CChar>?] = processArguments.map { strdup($0) }
        argv.append(nil)
        defer { for pointer in argv { free(pointer) } }
        execv(path, argv)
        return String(cString: strerror(errno))
    }
}
