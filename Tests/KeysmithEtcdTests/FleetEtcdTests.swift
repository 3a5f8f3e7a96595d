import Foundation
import KeychainServices
import Keysmith
import KeysmithEtcd
import Testing

/// The fleet source against real etcd processes on loopback ports (one member, or three).
/// Serialized: each test starts its own etcd, and the machine has few cores.
@Suite("Fleet keys on etcd", .serialized)
struct FleetEtcdTests {
    @Test("Keys published to etcd are read through KeyRetriever: newest, minimum and exact versions")
    func readsThroughKeyRetriever() async throws {
        let cluster = try await EtcdTestCluster.start(members: 1)
        defer { cluster.shutdown() }
        let machine = FleetMachine()
        let key = FleetKey.generate()
        let fleet = try machine.source(cluster.endpoints, key: key)
        try fleet.publish(Data("old-api-key".utf8), for: "api_key", version: "2024.06.01")
        try fleet.publish(Data("new-api-key".utf8), for: "api_key", version: "2024.07.01")
        try fleet.publish(Data("database-key".utf8), for: "db_key", version: "1")

        let retriever = fleetRetriever([fleet])
        let newest = try #require(try machine.run { try retriever.retrieve("api_key") })
        #expect(newest.data == Data("new-api-key".utf8))
        #expect(newest.version == "2024.07.01")
        #expect(newest.source == .remote)
        #expect(newest.location.hasPrefix("etcd key /keysmith/test/api_key/2024.07.01"))
        let old = try #require(try machine.run { try retriever.retrieve("api_key", version: "2024.6.1") })
        #expect(old.data == Data("old-api-key".utf8))
        #expect(try machine.run { try retriever.retrieve("api_key", minVersion: "2025.01.01") } == nil)
        #expect(try machine.run { try retriever.retrieve("apiKey") }?.version == "2024.07.01")  // a candidate spelling
        #expect(try machine.run { try retriever.retrieve("missing_key") } == nil)

        // A version is never overwritten, and nothing in etcd is the plaintext.
        #expect(throws: EtcdError.versionExists(identifier: "api_key", version: "2024.07.01")) {
            try fleet.publish(Data("attacker".utf8), for: "api_key", version: "2024.07.01")
        }
        // Values are base64 in etcdctl's JSON and may be base64 inside the envelope: decoded first.
        let stored = try EtcdStoredBytes.all(try await cluster.ctl(["get", "--prefix", "/keysmith/test/", "-w", "json"]))
        #expect(stored.count >= 3, "the three versions are in etcd")
        for plaintext in ["old-api-key", "new-api-key", "database-key"] {
            #expect(!stored.contains { $0.range(of: Data(plaintext.utf8)) != nil }, "\(plaintext) is in etcd")
        }
        #expect(try fleet.identifiers() == ["api_key", "db_key"])

        try await SourceConformance.check(fleet, expecting: ["api_key": ["2024.06.01", "2024.07.01"], "db_key": ["1"]])
    }

    @Test("A second keychain joins with the exported key file and reads the fleet's keys")
    func secondMachineJoins() async throws {
        let cluster = try await EtcdTestCluster.start(members: 1)
        defer { cluster.shutdown() }
        let first = FleetMachine()
        let key = FleetKey.generate()
        try first.keychain.storeFleetKey(key)
        try first.source(cluster.endpoints, key: key).publish(Data("shared-secret".utf8), for: "api_key", version: "1")

        let file = first.home.appendingPathComponent("fleet.key").path
        try FleetKeyFile.write(try #require(try first.keychain.fleetKey()), passphrase: Data("correct horse".utf8), to: file)
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(throws: EtcdError.wrongPassphrase(path: file)) {
            try FleetKeyFile.read(file, passphrase: Data("wrong horse".utf8))
        }

        let second = FleetMachine()
        try second.keychain.storeFleetKey(try FleetKeyFile.read(file, passphrase: Data("correct horse".utf8)))
        let joined = try #require(try second.keychain.fleetKey())
        #expect(joined.fingerprint == key.fingerprint)
        let fleet = try EtcdKeySource(
            configuration: try EtcdConfiguration(endpoints: cluster.endpoints, prefix: "/keysmith/test/"),
            keychain: second.keychain)
        let found = try #require(try second.run { try fleetRetriever([fleet]).retrieve("api_key") })
        #expect(found.data == Data("shared-secret".utf8))

        // A machine with another fleet key is refused, never served other bytes.
        let strangerMachine = FleetMachine()
        let stranger = try strangerMachine.source(cluster.endpoints, key: FleetKey.generate())
        #expect {
            try stranger.lookup("api_key")
        } throws: { error in
            guard case EtcdError.foreignFleetKey(_, _, _, let sealedWith, _) = error else { return false }
            return sealedWith == key.fingerprint
        }
    }

    @Test("A watching retriever serves a new version as soon as it lands (propagation time reported)")
    func watchingRetrieverSeesRotation() async throws {
        let cluster = try await EtcdTestCluster.start(members: 1)
        defer { cluster.shutdown() }
        let key = FleetKey.generate()
        let watcher = FleetMachine()
        let fleet = try watcher.source(cluster.endpoints, key: key)
        let publisherMachine = FleetMachine()
        let publisher = try publisherMachine.source(cluster.endpoints, key: key)
        try publisher.publish(Data("v1".utf8), for: "api_key", version: "1")

        let retriever = fleetRetriever([fleet])
        let log = ChangeLog()
        fleet.startWatching(updating: [retriever], onChange: log.handler)
        defer { fleet.stopWatching() }
        #expect(await inStep(fleet))
        #expect(try watcher.run { try retriever.retrieve("api_key") }?.data == Data("v1".utf8))
        #expect(retriever.cachedKeyCount == 1)

        let start = ContinuousClock.now
        try publisher.publish(Data("v2".utf8), for: "api_key", version: "2")
        let arrival = try #require(await log.next { $0.identifier == "api_key" && $0.version == "2" })
        let served = try #require(try watcher.run { try retriever.retrieve("api_key") })
        let end = ContinuousClock.now
        #expect(served.version == "2")
        #expect(served.data == Data("v2".utf8))
        print(
            "fleet: a rotation reached the watching retriever in \(milliseconds(arrival.1 - start)) ms "
                + "(served by retrieve after \(milliseconds(end - start)) ms)")

        // Retiring a version reaches it too, and its offline copy goes.
        try publisher.retire("api_key", version: "2")
        #expect(await log.next { $0.kind == .retired && $0.version == "2" } != nil)
        #expect(try watcher.run { try retriever.retrieve("api_key") }?.version == "1")
    }

    @Test("etcd stopped: the offline copy is served and says so; past the maximum staleness it fails")
    func offlineCopyWhenEtcdStops() async throws {
        let cluster = try await EtcdTestCluster.start(members: 1)
        defer { cluster.shutdown() }
        let key = FleetKey.generate()
        let machine = FleetMachine()
        let fleet = try machine.source(cluster.endpoints, key: key)
        try fleet.publish(Data("offline-key".utf8), for: "api_key", version: "3")
        #expect(try fleet.lookup("api_key").first?.location.hasPrefix("etcd key") == true)

        await cluster.stopping(0)
        let retriever = fleetRetriever([fleet])
        let served = try #require(try machine.run { try retriever.retrieve("api_key") })
        #expect(served.data == Data("offline-key".utf8))
        #expect(served.version == "3")
        #expect(served.location.contains("offline copy in the keychain, last confirmed by etcd 20"))
        let trace = machine.run { retriever.explain("api_key") }
        #expect(trace.description.contains("offline copy"))
        #expect(trace.description.contains("last confirmed by etcd"))

        // The same copy, with a maximum staleness it exceeds.
        let strict = try machine.source(cluster.endpoints, key: key, maximumStaleness: .zero)
        #expect {
            try machine.run { try strict.lookup("api_key") }
        } throws: { error in
            guard case EtcdError.offlineCopyTooOld(let identifier, _, _, _) = error else { return false }
            return identifier == "api_key" && "\(error)".contains("maximum staleness")
        }
        // A key never read has no copy: the source fails instead of saying "not found".
        #expect(throws: EtcdError.self) { try machine.run { try fleet.lookup("never_read") } }
    }

    @Test("etcd restarted: the watch resumes, and a rotation made meanwhile (then compacted) arrives")
    func watchResumesAfterRestart() async throws {
        let cluster = try await EtcdTestCluster.start(members: 1)
        defer { cluster.shutdown() }
        let key = FleetKey.generate()
        let watcher = FleetMachine()
        let fleet = try watcher.source(cluster.endpoints, key: key, reconnect: .milliseconds(200))
        let publisherMachine = FleetMachine()
        let publisher = try publisherMachine.source(cluster.endpoints, key: key)
        try publisher.publish(Data("v1".utf8), for: "db_key", version: "1")
        let retriever = fleetRetriever([fleet])
        let log = ChangeLog()
        fleet.startWatching(updating: [retriever], onChange: log.handler)
        defer { fleet.stopWatching() }
        #expect(await inStep(fleet))
        #expect(try watcher.run { try retriever.retrieve("db_key") }?.version == "1")

        // The first outage: etcd stops and comes back; a rotation made while the watch
        // waits to reconnect arrives when it resumes.
        let original = cluster.members[0].clientPort
        await cluster.stopping(0)
        try await cluster.restarting(0)
        try publisher.publish(Data("v2".utf8), for: "db_key", version: "2")
        #expect(await log.next { $0.version == "2" } != nil)
        #expect(await inStep(fleet))
        #expect(try watcher.run { try retriever.retrieve("db_key") }?.data == Data("v2".utf8))

        // The second: while etcd answers only on a port the watcher does not know, a rotation
        // lands and etcd compacts away the history the watch would resume from. Back on its
        // port, the watch finds the history gone, reads the prefix again and reports it.
        await cluster.stopping(0)
        try await cluster.restarting(0, clientPort: try EtcdTestCluster.freePorts(1)[0])
        let elsewhereMachine = FleetMachine()
        let elsewhere = try elsewhereMachine.source(cluster.endpoints, key: key)
        try elsewhere.publish(Data("v3".utf8), for: "db_key", version: "3")
        try elsewhere.retire("db_key", version: "1")
        let status = try cluster.post(cluster.members[0].clientPort, "/v3/kv/range", ["key": "eA=="])
        let revision = ((status["header"] as? [String: Any])?["revision"] as? String) ?? "0"
        try await cluster.ctl(["compaction", revision])
        await cluster.stopping(0)
        try await cluster.restarting(0, clientPort: original)

        #expect(await log.next { $0.version == "3" && $0.kind == .published } != nil)
        #expect(await log.next { $0.version == "1" && $0.kind == .retired } != nil)
        #expect(await inStep(fleet))
        #expect(fleet.watchConnections >= 3)
        #expect(fleet.watchFullReads == 2)
        #expect(try watcher.run { try retriever.retrieve("db_key") }?.data == Data("v3".utf8))
        #expect(try watcher.run { try retriever.retrieve("db_key", version: "1") } == nil)
    }

    @Test("Three members, leader killed: reads keep being served and rotations accepted")
    func threeMembersSurviveLeaderLoss() async throws {
        let cluster = try await EtcdTestCluster.start(members: 3)
        defer { cluster.shutdown() }
        let key = FleetKey.generate()
        let machine = FleetMachine()
        let reader = try machine.source(cluster.endpoints, key: key)
        let watcherMachine = FleetMachine()
        let watcher = try watcherMachine.source(cluster.endpoints, key: key)
        let log = ChangeLog()
        watcher.startWatching(onChange: log.handler)
        defer { watcher.stopWatching() }
        // The watch is established before the first publish: a value already present when the
        // watch starts is its starting state, not a change it reports.
        #expect(await inStep(watcher))
        try reader.publish(Data("v1".utf8), for: "api_key", version: "1")
        #expect(await log.next { $0.version == "1" } != nil)

        let leader = try cluster.leader()
        await cluster.killing(leader)
        // Served by a surviving member, not from the offline copy.
        let found = try #require(try machine.run { try reader.lookup("api_key") }.first)
        #expect(found.data == Data("v1".utf8))
        #expect(found.location.hasPrefix("etcd key"))
        try await blocking { try reader.publish(Data("v2".utf8), for: "api_key", version: "2") }
        #expect(try machine.run { try reader.lookup("api_key") }.map(\.version).sorted() == ["1", "2"])
        #expect(await log.next { $0.version == "2" } != nil)
        #expect(try cluster.leader() != leader)
    }

    @Test("A value changed, swapped or written by hand with etcdctl is refused with a clear error")
    func tamperedValuesAreRefused() async throws {
        let cluster = try await EtcdTestCluster.start(members: 1)
        defer { cluster.shutdown() }
        let machine = FleetMachine()
        let fleet = try machine.source(cluster.endpoints, key: FleetKey.generate())
        try fleet.publish(Data("first".utf8), for: "api_key", version: "1")
        try fleet.publish(Data("second".utf8), for: "api_key", version: "2")
        try fleet.publish(Data("other".utf8), for: "db_key", version: "1")

        func reason(_ name: String) -> String? {
            do {
                _ = try machine.run { try fleet.lookup(name) }
                return nil
            } catch EtcdError.tampered(_, _, _, let reason) {
                return reason
            } catch {
                return "unexpected \(error)"
            }
        }
        // Swapped: db_key's value copied over api_key version 2 (with etcdctl).
        let other = try await cluster.ctl(["get", "/keysmith/test/db_key/1", "--print-value-only"])
            .trimmingCharacters(in: .newlines)
        try await cluster.ctl(["put", "/keysmith/test/api_key/2", other])
        #expect(reason("api_key")?.contains("moved or copied from another name or version") == true)

        // Moved: version 1's value copied to version 2 of the same key.
        let first = try await cluster.ctl(["get", "/keysmith/test/api_key/1", "--print-value-only"])
            .trimmingCharacters(in: .newlines)
        let relabelled = first.replacingOccurrences(of: "\"version\":\"1\"", with: "\"version\":\"2\"")
        #expect(relabelled != first)
        try await cluster.ctl(["put", "/keysmith/test/api_key/2", relabelled])
        #expect(reason("api_key")?.contains("fails authentication") == true)

        // Changed ciphertext.
        var object = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        var ciphertext = try #require(Data(base64Encoded: object["ciphertext"] as? String ?? ""))
        ciphertext[0] ^= 1
        object["ciphertext"] = ciphertext.base64EncodedString()
        let changed = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        try await cluster.ctl(["put", "/keysmith/test/api_key/1", changed])
        try await cluster.ctl(["del", "/keysmith/test/api_key/2"])
        #expect(reason("api_key")?.contains("fails authentication: it was changed in etcd") == true)

        // Written by hand in the clear.
        try await cluster.ctl(["put", "/keysmith/test/plain_key/1", "hunter2"])
        #expect(reason("plain_key")?.contains("is not a sealed fleet value") == true)

        // Through a retriever: never a value. A sensitive key stops the lookup with the error.
        let retriever = fleetRetriever([fleet])
        #expect(try machine.run { try retriever.retrieve("plain_key") } == nil)
        #expect(machine.run { retriever.explain("plain_key") }.description.contains("not a sealed fleet value"))
        retriever.setPolicy(KeyPolicy(sensitive: ["plain_key"], enforcement: .always))
        #expect(throws: KeyRetrievalError.self) { try machine.run { try retriever.retrieve("plain_key") } }

        // What the error says to do works: a refused version keeps refusing every lookup of
        // its key (a new version alone does not help) until it is retired.
        try fleet.publish(Data("third".utf8), for: "api_key", version: "3")
        var refusal: EtcdError?
        do { _ = try machine.run { try fleet.lookup("api_key") } } catch let error as EtcdError { refusal = error }
        let recovery = try #require(refusal).recovery
        #expect(recovery.contains("keysmith fleet retire api_key --version 1"), "\(recovery)")
        // It does not open here, so retiring it takes --force.
        #expect(throws: EtcdError.self) { try fleet.retire("api_key", version: "1") }
        try fleet.retire("api_key", version: "1", force: true)
        #expect(try machine.run { try fleet.lookup("api_key") }.map(\.version) == ["3"])
    }

    @Test("etcd username and password: a token is used; a wrong password is a clear error")
    func authentication() async throws {
        let cluster = try await EtcdTestCluster.start(members: 1)
        defer { cluster.shutdown() }
        try await cluster.ctl(["user", "add", "root:rootpass"])
        try await cluster.ctl(["auth", "enable"])
        let key = FleetKey.generate()
        let machine = FleetMachine()
        let fleet = try machine.source(
            cluster.endpoints, key: key, credentials: EtcdCredentials(username: "root", password: "rootpass"))
        try fleet.publish(Data("authenticated".utf8), for: "api_key", version: "1")
        #expect(try machine.run { try fleet.lookup("api_key") }.first?.data == Data("authenticated".utf8))
        #expect(!"\(fleet)".contains("rootpass") && !String(reflecting: fleet.configuration).contains("rootpass"))

        let wrong = try machine.source(
            cluster.endpoints, key: key, credentials: EtcdCredentials(username: "root", password: "nope"))
        #expect {
            try machine.run { try wrong.lookup("api_key") }
        } throws: { error in
            guard case EtcdError.authenticationFailed = error else { return false }
            return true
        }
        let anonymous = try machine.source(cluster.endpoints, key: key)
        #expect(throws: EtcdError.self) { try machine.run { try anonymous.lookup("api_key") } }
    }
}
