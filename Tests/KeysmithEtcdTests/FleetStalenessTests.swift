import Foundation
import KeychainServices
import Keysmith
import KeysmithEtcd
import Testing

/// The maximum staleness means time since etcd last answered: a frozen etcd (SIGSTOP keeps its
/// sockets open and answers nothing) is not "confirmed" by a watch that merely stays open.
@Suite("Fleet staleness", .serialized)
struct FleetStalenessTests {
    @Test("etcd frozen: past the maximum staleness, lookups fail in the watching process and in another")
    func frozenEtcdExpiresTheCopies() async throws {
        let cluster = try await EtcdTestCluster.start(members: 1)
        defer { cluster.shutdown() }
        let key = FleetKey.generate()
        let machine = FleetMachine()
        let bound: Duration = .seconds(5)
        let watcher = try machine.source(cluster.endpoints, key: key, maximumStaleness: bound)
        let log = ChangeLog()
        watcher.startWatching(onChange: log.handler)
        defer { watcher.stopWatching() }
        #expect(await inStep(watcher))
        let publisher = try FleetMachine().source(cluster.endpoints, key: key)
        try publisher.publish(Data("fresh".utf8), for: "api_key", version: "1")
        #expect(await log.next { $0.version == "1" } != nil)
        #expect(try machine.run { try watcher.lookup("api_key") }.first?.location.hasPrefix("etcd key") == true)
        // Another process on this machine: the same keychain, its own source, no watch.
        let other = try machine.source(cluster.endpoints, key: key, maximumStaleness: bound)
        #expect(try machine.run { try other.lookup("api_key") }.first?.data == Data("fresh".utf8))

        await cluster.freezing(0)
        // Well past the bound (and past a request timeout for each lookup).
        try await Task.sleep(for: .seconds(8))
        for (name, source) in [("watching", watcher), ("other", other)] {
            let outcome = await blocking { () -> String in
                do {
                    let records = try machine.run { try source.lookup("api_key") }
                    return "served: \(records.map(\.location))"
                } catch {
                    return "\(error)"
                }
            }
            #expect(outcome.contains("older than the maximum staleness of 5 s"), "\(name): \(outcome)")
        }
        cluster.thaw(0)

        // etcd answers again: both serve from etcd again (polled: the watch's next check, and
        // the other's pause after a failed read, take a moment).
        for (name, source) in [("watching", watcher), ("other", other)] {
            let location = await blocking { () -> String? in
                let deadline = Date().addingTimeInterval(30)
                while Date() < deadline {
                    if let found = try? machine.run({ try source.lookup("api_key") }).first, found.location.hasPrefix("etcd key") {
                        return found.location
                    }
                    Thread.sleep(forTimeInterval: 0.2)
                }
                return nil
            }
            #expect(location != nil, "\(name) serves from etcd again once it answers")
        }
    }
}
