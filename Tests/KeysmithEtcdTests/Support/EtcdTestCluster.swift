import Foundation
import KeychainServices
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Real etcd members on loopback ports in a temporary directory, for one test.
///
/// Each member runs under `Tests/Support/etcd/run-etcd.sh`, which stops etcd when told to
/// and also when this test process exits, so a failing or crashing test leaves no etcd
/// behind. Call ``shutdown()`` in a `defer` (deinit does it too).
final class EtcdTestCluster: @unchecked Sendable {
    struct Member {
        let name: String
        var clientPort: Int
        let peerPort: Int
        let directory: URL
        var runner: Process?
        var etcdPID: Int32 = 0
    }

    let directory: URL
    private(set) var members: [Member]
    private let lock = NSLock()
    private let initialCluster: String
    /// With certificates, clients speak TLS and must present a client certificate.
    let certificates: EtcdTestCertificates?

    /// The members' client URLs.
    var endpoints: [String] { members.map { "\(scheme)://127.0.0.1:\($0.clientPort)" } }

    /// `https` with certificates, else `http`.
    var scheme: String { certificates == nil ? "http" : "https" }

    /// Starts `size` members and waits until each answers `/health`.
    /// - Parameter certificates: When given, etcd serves clients over TLS with
    ///   `--cert-file/--key-file/--trusted-ca-file/--client-cert-auth`.
    init(members size: Int, certificates: EtcdTestCertificates? = nil) throws {
        self.certificates = certificates
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/etcd") || EtcdTestCluster.which("etcd") != nil
        else {
            throw ClusterError("etcd is not installed: run make deps (it installs etcd-server and etcd-client)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "keysmith-etcd-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ports = try EtcdTestCluster.freePorts(size * 2)
        let root = directory
        members = (0..<size).map { index in
            Member(
                name: "m\(index)", clientPort: ports[index * 2], peerPort: ports[index * 2 + 1],
                directory: root.appendingPathComponent("m\(index)"))
        }
        initialCluster = members.map { "\($0.name)=http://127.0.0.1:\($0.peerPort)" }.joined(separator: ",")
        // Members of one cluster wait for each other: start all, then read each "ready".
        var pipes: [Pipe] = []
        for index in members.indices { pipes.append(try launch(index, state: "new")) }
        for index in members.indices { try awaitReady(index, pipes[index]) }
    }

    deinit { shutdown() }

    /// Stops every member (the runner script stops etcd on SIGTERM) and removes the
    /// directory once they have exited, without making the caller wait.
    func shutdown() {
        // A frozen member would not stop until the runner's SIGKILL.
        for index in members.indices { thaw(index) }
        let runners = lock.held { () -> [Process] in
            let running = members.compactMap(\.runner)
            for index in members.indices { members[index].runner = nil }
            return running
        }
        // The runner script removes a member's data once etcd has stopped.
        for member in members {
            _ = FileManager.default.createFile(
                atPath: member.directory.appendingPathComponent("remove-when-stopped").path, contents: nil)
        }
        for runner in runners where runner.isRunning { runner.terminate() }
        if runners.isEmpty { try? FileManager.default.removeItem(at: directory) }
    }

    /// Stops one member gracefully (its data stays, for a restart).
    func stop(_ index: Int) {
        let runner = lock.held { () -> Process? in
            let runner = members[index].runner
            members[index].runner = nil
            return runner
        }
        guard let runner else { return }
        if runner.isRunning { runner.terminate() }
        runner.waitUntilExit()
    }

    /// Freezes one member's etcd (SIGSTOP): its sockets stay open, it answers nothing.
    func freeze(_ index: Int) {
        signal(index, SIGSTOP)
    }

    /// Lets a frozen member run again (SIGCONT).
    func thaw(_ index: Int) {
        signal(index, SIGCONT)
    }

    private func signal(_ index: Int, _ number: Int32) {
        let pid = lock.held { members[index].etcdPID }
        #if canImport(Glibc)
            if pid > 0 { _ = Glibc.kill(pid, number) }
        #else
            if pid > 0 { _ = Darwin.kill(pid, number) }
        #endif
    }

    /// Kills one member's etcd with SIGKILL (a crash).
    func kill(_ index: Int) {
        let pid = lock.held { members[index].etcdPID }
        #if canImport(Glibc)
            if pid > 0 { _ = Glibc.kill(pid, SIGKILL) }
        #else
            if pid > 0 { _ = Darwin.kill(pid, SIGKILL) }
        #endif
        stop(index)
    }

    /// Starts a stopped member again on its data, on the same ports or on another client
    /// port (clients that know only the old one cannot reach it).
    func restart(_ index: Int, clientPort: Int? = nil) throws {
        if let clientPort { lock.held { members[index].clientPort = clientPort } }
        let pipe = try launch(index, state: "existing")
        try awaitReady(index, pipe)
    }

    /// The index of the current leader (asks each running member).
    func leader() throws -> Int {
        for (index, member) in members.enumerated() where member.runner != nil {
            guard let status = try? post(member.clientPort, "/v3/maintenance/status", [:]),
                let leader = status["leader"] as? String,
                let header = status["header"] as? [String: Any], let id = header["member_id"] as? String
            else { continue }
            if leader == id { return index }
        }
        throw ClusterError("no member reports itself as the leader")
    }

    /// Runs `etcdctl` against the running members.
    @discardableResult
    func etcdctl(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: EtcdTestCluster.which("etcdctl") ?? "/usr/bin/etcdctl")
        let live = members.filter { $0.runner != nil }.map { "\(scheme)://127.0.0.1:\($0.clientPort)" }
        process.arguments = ["--endpoints", live.joined(separator: ","), "--command-timeout", "5s"] + tlsArguments(
            key: "--key") + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["ETCDCTL_API"] = "3"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw ClusterError("etcdctl \(arguments.first ?? "") failed: \(text)")
        }
        return text
    }

    /// Posts JSON to one member.
    func post(_ port: Int, _ path: String, _ body: [String: Any]) throws -> [String: Any] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: EtcdTestCluster.which("curl") ?? "/usr/bin/curl")
        process.arguments = [
            "-sf", "-m", "3", "-X", "POST", "\(scheme)://127.0.0.1:\(port)\(path)", "-d",
            String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self),
        ] + tlsArguments(key: "--key")
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ClusterError("no JSON from \(path)")
        }
        return object
    }

    /// `--cacert`, `--cert` and `KEY` (etcdctl's and curl's spelling is `--key`) with the
    /// test's good client certificate, when the cluster speaks TLS.
    private func tlsArguments(key: String) -> [String] {
        guard let certificates else { return [] }
        return ["--cacert", certificates.caFile, "--cert", certificates.clientCertificate, key, certificates.clientKey]
    }

    // MARK: Processes

    private static let script: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Support/etcd/run-etcd.sh").path
    }()

    private func launch(_ index: Int, state: String) throws -> Pipe {
        let member = members[index]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            EtcdTestCluster.script, member.name, member.directory.path, String(member.clientPort),
            String(member.peerPort), initialCluster, state,
        ]
        if let certificates {
            var environment = ProcessInfo.processInfo.environment
            environment["ETCD_TLS_DIR"] = certificates.directory.path
            process.environment = environment
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        lock.held { members[index].runner = process }
        return pipe
    }

    private func awaitReady(_ index: Int, _ pipe: Pipe) throws {
        var line = Data()
        let handle = pipe.fileHandleForReading
        while true {
            let byte = handle.readData(ofLength: 1)
            if byte.isEmpty || byte == Data([0x0A]) { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("ready "), let pid = Int32(text.dropFirst(6)) else {
            let log = (try? String(contentsOf: members[index].directory.appendingPathComponent("etcd.log"), encoding: .utf8))
                .map { String($0.suffix(600)) } ?? ""
            throw ClusterError("etcd member \(members[index].name) did not start: \(text) \(log)")
        }
        lock.held { members[index].etcdPID = pid }
    }

    static func which(_ tool: String) -> String? {
        for directory in ["/usr/bin", "/usr/local/bin", "/bin"] {
            let path = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// `count` distinct free loopback ports (bound to port 0, then released).
    static func freePorts(_ count: Int) throws -> [Int] {
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw ClusterError("socket() failed") }
            sockets.append(fd)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw ClusterError("bind() failed") }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }

    struct ClusterError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

extension NSLock {
    /// Runs `body` holding the lock (Foundation's `withLock` needs macOS 14).
    func held<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
