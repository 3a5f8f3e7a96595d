#if !canImport(Security)
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal for prompt tests: the code under test opens ``devicePath`` as its
/// terminal; the test plays the user through the master side.
final class PseudoTerminal {
    let master: Int32
    /// The terminal side, kept open by the test so its mode can be read at any time.
    let device: Int32
    let devicePath: String
    private var shown: [UInt8] = []

    init() throws {
        // posix_openpt, unlockpt and ptsname are not visible from Swift: their Linux ioctls
        // (TIOCSPTLCK, TIOCGPTN) do the same on devpts.
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0 else {
            throw CocoaError(.fileNoSuchFile)
        }
        devicePath = "/dev/pts/\(number)"
        device = open(devicePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard device >= 0 else { throw CocoaError(.fileNoSuchFile) }
    }

    deinit {
        close(device)
        close(master)
    }

    /// The terminal's local mode flags (ECHO, ICANON, ...).
    var localModes: tcflag_t {
        var mode = termios()
        tcgetattr(device, &mode)
        return mode.c_lflag
    }

    /// Types `text` as the user would.
    func type(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress!, $0.count) }
    }

    /// Reads what the terminal shows until `text` has appeared (or 30 seconds pass, which
    /// fails the test rather than hanging it); returns everything shown so far.
    @discardableResult
    func readShown(until text: String) -> String {
        let wanted = Array(text.utf8)
        let deadline = Date(timeIntervalSinceNow: 30)
        while !shown.contains(wanted), Date() < deadline {
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 1000) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = read(master, &buffer, buffer.count)
            guard count > 0 else { break }
            shown += buffer[0..<count]
        }
        return String(decoding: shown, as: UTF8.self)
    }

    /// Everything the terminal has shown so far (after a ``readShown(until:)``).
    var everythingShown: String { String(decoding: shown, as: UTF8.self) }
}

extension Array where Element == UInt8 {
    fileprivate func contains(_ other: [UInt8]) -> Bool {
        guard !other.isEmpty, other.count <= count else { return other.isEmpty }
        for start in 0...(count - other.count) where Array(self[start..<start + other.count]) == other { return true }
        return false
    }
}

/// Runs a blocking call on its own thread and hands back its result.
final class BlockingCall<Result: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result?
    private(set) var thread: pthread_t?
    private let started = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () -> Result) {
        let worker = Thread { [self] in
            self.thread = pthread_self()
            self.started.signal()
            self.result = body()
            self.done.signal()
        }
        worker.start()
        started.wait()
    }

    /// The result, waiting at most 60 seconds (a test that would hang fails instead).
    func value() -> Result? {
        guard done.wait(timeout: .now() + 60) == .success else { return nil }
        return result
    }
}
#endif
