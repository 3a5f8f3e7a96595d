import Foundation
import KeychainServices
import Keysmith
import KeysmithEtcd

/// One machine of a test fleet: its own temporary keychain, removed at the end.
final class FleetMachine: @unchecked Sendable {
    let home: URL
    let environment: KeychainEnvironment
    let keychain: FleetKeychain

    init() {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("keysmith-fleet-\(UUID().uuidString)")
        // The keychain refuses a directory others can read.
        try? FileManager.default.createDirectory(
            at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        environment = KeychainEnvironment(directory: home, accessGroups: ["fleet.tests"])
        let environment = self.environment
        keychain = KeychainEnvironment.withEnvironment(environment) { FleetKeychain() }
    }

    deinit { try? FileManager.default.removeItem(at: home) }

    /// A source over `endpoints` with this machine's keychain and `key`.
    func source(
        _ endpoints: [String], prefix: String = "/keysmith/test/", key: FleetKey,
        maximumStaleness: Duration? = .seconds(3600), reconnect: Duration = .milliseconds(100),
        credentials: EtcdCredentials? = nil, tls: EtcdTLSOptions = EtcdTLSOptions()
    ) throws -> EtcdKeySource {
        let configuration = try EtcdConfiguration(
            endpoints: endpoints.map { URL(string: $0)! }, prefix: prefix, requestTimeout: .seconds(2),
            initialReconnectDelay: reconnect, maximumReconnectDelay: .seconds(2), maximumStaleness: maximumStaleness,
            credentials: credentials, tls: tls)
        return EtcdKeySource(configuration: configuration, fleetKey: key, keychain: keychain)
    }

    /// Runs `body` with this machine's keychain in force.
    func run<R>(_ body: () throws -> R) rethrows -> R {
        try KeychainEnvironment.withEnvironment(environment, body)
    }
}

/// A retriever over only `sources`: no expiry timer, no logging, no observers.
func fleetRetriever(_ sources: [any KeySource]) -> KeyRetriever {
    KeyRetriever(
        sources: sources, environment: .init(tag: "fleet-test", isRelease: false), cacheTimeToLive: nil,
        logging: .disabled, notificationCenter: nil)
}

/// Changes seen by a watching source, awaited one by one.
final class ChangeLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var changes: [EtcdKeySource.Change] = []
    private var times: [ContinuousClock.Instant] = []

    var handler: @Sendable (EtcdKeySource.Change) -> Void {
        { [self] change in
            condition.lock()
            changes.append(change)
            times.append(ContinuousClock.now)
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Waits (up to `timeout`) for a change matching `predicate`; returns it and when it
    /// arrived.
    func wait(
        timeout: TimeInterval = 60, _ predicate: (EtcdKeySource.Change) -> Bool
    ) -> (EtcdKeySource.Change, ContinuousClock.Instant)? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let index = changes.firstIndex(where: predicate) { return (changes[index], times[index]) }
            if !condition.wait(until: deadline) {
                return changes.firstIndex(where: predicate).map { (changes[$0], times[$0]) }
            }
        }
    }
}

/// Milliseconds, for reports.
func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

/// Runs blocking work (waiting for etcd, for a change, for a process) on a thread of its own,
/// so that a test never holds one of the few threads other suites' async tests run on.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// The same, for work that does not throw.
func blocking<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

extension EtcdTestCluster {
    /// Starts a cluster off the test's thread.
    static func start(members: Int, certificates: EtcdTestCertificates? = nil) async throws -> EtcdTestCluster {
        try await blocking { try EtcdTestCluster(members: members, certificates: certificates) }
    }

    /// ``stop(_:)`` off the test's thread.
    func stopping(_ index: Int) async {
        await blocking { self.stop(index) }
    }

    /// ``freeze(_:)`` off the test's thread.
    func freezing(_ index: Int) async {
        await blocking { self.freeze(index) }
    }

    /// ``kill(_:)`` off the test's thread.
    func killing(_ index: Int) async {
        await blocking { self.kill(index) }
    }

    /// ``restart(_:clientPort:)`` off the test's thread.
    func restarting(_ index: Int, clientPort: Int? = nil) async throws {
        try await blocking { try self.restart(index, clientPort: clientPort) }
    }

    /// ``etcdctl(_:)`` off the test's thread.
    @discardableResult
    func ctl(_ arguments: [String]) async throws -> String {
        try await blocking { try self.etcdctl(arguments) }
    }
}

extension ChangeLog {
    /// ``wait(timeout:_:)`` off the test's thread.
    func next(
        _ predicate: @escaping @Sendable (EtcdKeySource.Change) -> Bool
    ) async -> (EtcdKeySource.Change, ContinuousClock.Instant)? {
        await blocking { self.wait(predicate) }
    }
}

/// Waits (off the test's thread) until the watch is in step.
func inStep(_ source: EtcdKeySource) async -> Bool {
    await blocking { source.waitUntilInStep(timeout: .seconds(60)) }
}

extension EtcdTestCertificates {
    /// Makes the certificates off the test's thread.
    static func make() async throws -> EtcdTestCertificates {
        try await blocking { try EtcdTestCertificates() }
    }

    /// The CA file, client certificate and key etcd accepts.
    var goodOptions: EtcdTLSOptions {
        EtcdTLSOptions(caFile: caFile, clientCertificate: clientCertificate, clientKey: clientKey)
    }
}
