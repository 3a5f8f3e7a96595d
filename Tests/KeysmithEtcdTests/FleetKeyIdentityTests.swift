import Foundation
import KeychainServices
import Keysmith
import Testing

@testable import KeysmithEtcd

/// Values that name the fleet key that sealed them: a machine with another fleet key is told
/// apart from a changed value, and nothing advises retiring a version that opens elsewhere.
@Suite("Fleet values name their fleet key", .serialized)
struct FleetKeyIdentityTests {
    @Test("The fingerprint is a one-way, labelled hash of the key: SHA-256 of a fixed label and the key, first 8 bytes")
    func fingerprintIsALabelledOneWayHash() throws {
        // A known answer (Python: hashlib.sha256(b"keysmith fleet key fingerprint\0" + bytes(range(32)))):
        // values name it, so it must not change between builds or platforms.
        let key = try FleetKey(Data(0..<32))
        #expect(key.fingerprint == "7c915011767314a0")
        // Not the key's bytes, nor a plain hash of them without the label.
        #expect(!key.fingerprint.contains("0001020304"))
        let unlabelled = FleetCipher.sha256(Data(0..<32)).prefix(8).map { String(format: "%02x", $0) }.joined()
        #expect(key.fingerprint != unlabelled)
        #expect("\(key)" == "FleetKey(fingerprint 7c915011767314a0)")
    }

    @Test("Another fleet key is told apart from a changed value; values in the older format still open")
    func foreignKeyToldApartFromTampering() async throws {
        let cluster = try await EtcdTestCluster.start(members: 1)
        defer { cluster.shutdown() }
        let fleetKey = FleetKey.generate()
        let machine = FleetMachine()
        let fleet = try machine.source(cluster.endpoints, key: fleetKey)
        try fleet.publish(Data("right".utf8), for: "api_key", version: "1")
        let stored = try await cluster.ctl(["get", "/keysmith/test/api_key/1", "--print-value-only"])
        #expect(stored.contains("\"fleetKey\":\"\(fleetKey.fingerprint)\""))

        // A machine with another fleet key: its own error, whose advice is to join, never to retire.
        let strangerKey = FleetKey.generate()
        let strangerMachine = FleetMachine()
        let stranger = try strangerMachine.source(cluster.endpoints, key: strangerKey)
        var caught: EtcdError?
        do { _ = try strangerMachine.run { try stranger.lookup("api_key") } } catch let error as EtcdError { caught = error }
        let foreign = try #require(caught)
        #expect(
            foreign
                == .foreignFleetKey(
                    identifier: "api_key", version: "1", key: "/keysmith/test/api_key/1",
                    sealedWith: fleetKey.fingerprint, thisMachine: strangerKey.fingerprint))
        #expect(foreign.recovery.contains("keysmith fleet join") && !foreign.recovery.contains("retire"), "\(foreign.recovery)")
        // Nor may that machine retire it (it opens on the fleet's machines) without --force.
        #expect {
            try strangerMachine.run { try stranger.retire("api_key", version: "1") }
        } throws: { error in
            guard case EtcdError.retireRefused(_, _, let reason) = error else { return false }
            return reason.contains("sealed under fleet key \(fleetKey.fingerprint)")
        }
        #expect(try machine.run { try fleet.lookup("api_key") }.first?.data == Data("right".utf8))

        // Changed in etcd (the fleet key it names is this machine's): tampering, retire with --force.
        var object = try #require(try JSONSerialization.jsonObject(with: Data(stored.utf8)) as? [String: Any])
        var ciphertext = try #require(Data(base64Encoded: object["ciphertext"] as? String ?? ""))
        ciphertext[3] ^= 0x40
        object["ciphertext"] = ciphertext.base64EncodedString()
        try await cluster.ctl([
            "put", "/keysmith/test/api_key/1", String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self),
        ])
        caught = nil
        do { _ = try machine.run { try fleet.lookup("api_key") } } catch let error as EtcdError { caught = error }
        guard case .tampered(_, _, _, let reason)? = caught else {
            Issue.record("expected a tampered value, got \(String(describing: caught))")
            return
        }
        #expect(reason.contains("changed in etcd"))
        #expect(caught?.recovery.contains("keysmith fleet retire api_key --version 1 --force") == true)

        // A value in the older format (no fleet key named) still opens; with another key it
        // cannot tell which happened, and says so.
        let legacy = try legacyEnvelope(Data("older".utf8), identifier: "old_key", version: "7", fleetKey: fleetKey)
        try await cluster.ctl(["put", "/keysmith/test/old_key/7", legacy])
        #expect(try machine.run { try fleet.lookup("old_key") }.first?.data == Data("older".utf8))
        caught = nil
        do { _ = try strangerMachine.run { try stranger.lookup("old_key") } } catch let error as EtcdError { caught = error }
        guard case .unopenable? = caught else {
            Issue.record("expected an unopenable older value, got \(String(describing: caught))")
            return
        }
        #expect(caught?.recovery.contains("only if they are the same") == true)
    }

    @Test("fleet init on a prefix with values refuses and names fleet join; put and retire with another key refuse")
    func commandsRefuseAnotherFleetsPrefix() async throws {
        let cluster = try await EtcdTestCluster.start(members: 1)
        defer { cluster.shutdown() }
        let first = FleetMachine()
        let late = FleetMachine()
        let endpoints = cluster.endpoints.joined(separator: ",")
        var run = keysmith(["fleet", "init", "--endpoints", endpoints, "--prefix", "/keysmith/shared"], home: first.home)
        #expect(run.status == 0, "\(run.stderr)")
        run = keysmith(["fleet", "put", "api_key", "--version", "1", "--stdin"], home: first.home, input: "shared-key\n")
        #expect(run.status == 0, "\(run.stderr)")
        let before = try await cluster.ctl(["get", "--prefix", "/keysmith/"])

        run = keysmith(["fleet", "init", "--endpoints", endpoints, "--prefix", "/keysmith/shared"], home: late.home)
        #expect(run.status == 1)
        #expect(run.stderr.contains("already holds 1 fleet value"), "\(run.stderr)")
        #expect(run.stderr.contains("keysmith fleet join"), "\(run.stderr)")
        #expect(try await cluster.ctl(["get", "--prefix", "/keysmith/"]) == before)
        run = keysmith(["fleet", "list"], home: late.home)
        #expect(run.status == 1, "no fleet settings were stored")

        // A machine whose prefix was empty at init, and filled by the fleet since.
        run = keysmith(["fleet", "init", "--endpoints", endpoints, "--prefix", "/keysmith/race"], home: late.home)
        #expect(run.status == 0, "\(run.stderr)")
        let fleetMachine = FleetMachine()
        let fleet = try fleetMachine.source(cluster.endpoints, prefix: "/keysmith/race/", key: FleetKey.generate())
        try fleet.publish(Data("fleet-key".utf8), for: "api_key", version: "1")
        let filled = try await cluster.ctl(["get", "--prefix", "/keysmith/race/"])
        run = keysmith(["fleet", "put", "api_key", "--version", "2", "--generate", "32"], home: late.home)
        #expect(run.status == 1)
        #expect(run.stderr.contains("sealed under fleet key \(fleet.fleetKeyFingerprint)"), "\(run.stderr)")
        #expect(run.stderr.contains("nothing was published"), "\(run.stderr)")
        run = keysmith(["fleet", "retire", "api_key", "--version", "1"], home: late.home)
        #expect(run.status == 1)
        #expect(run.stderr.contains("refused to retire version 1"), "\(run.stderr)")
        #expect(run.stderr.contains("nothing needs retiring"), "\(run.stderr)")
        #expect(try await cluster.ctl(["get", "--prefix", "/keysmith/race/"]) == filled)
        run = keysmith(["fleet", "list"], home: late.home)
        #expect(run.stderr.contains("sealed under another fleet key"), "\(run.stderr)")
        #expect(try fleetMachine.run { try fleet.lookup("api_key") }.first?.data == Data("fleet-key".utf8))
    }

    /// A format 1 envelope, as Keysmith wrote before values named their fleet key.
    private func legacyEnvelope(_ data: Data, identifier: String, version: String, fleetKey: FleetKey) throws -> String {
        let nonce = FleetCipher.randomBytes(FleetCipher.nonceLength)
        let associatedData = SealedValue.associatedData(format: 1, identifier: identifier, version: version, fleetKey: nil)
        let ciphertext = try fleetKey.withUnsafeBytes { try FleetCipher.seal(data, key: $0, nonce: nonce, associatedData: associatedData) }
        let object: [String: Any] = [
            "keysmith": "fleet-value", "format": 1, "identifier": identifier, "version": version,
            "created": "2026-01-01T00:00:00Z", "nonce": nonce.base64EncodedString(),
            "ciphertext": ciphertext.base64EncodedString(),
        ]
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}
