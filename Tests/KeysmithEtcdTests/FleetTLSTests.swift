import Foundation
import KeychainServices
import Keysmith
import KeysmithEtcd
import Testing

/// The fleet against etcd that speaks TLS with its own CA and requires client certificates
/// (`--cert-file/--key-file/--trusted-ca-file/--client-cert-auth`), certificates made with
/// openssl for the test.
@Suite("Fleet keys on etcd over TLS", .serialized)
struct FleetTLSTests {
    @Test("TLS with a private CA and client certificate: put, resolve and watch; a killed member is failed over")
    func tlsPutResolveWatchFailover() async throws {
        let certificates = try await EtcdTestCertificates.make()
        defer { certificates.remove() }
        let cluster = try await EtcdTestCluster.start(members: 3, certificates: certificates)
        defer { cluster.shutdown() }
        #expect(cluster.endpoints.allSatisfy { $0.hasPrefix("https://127.0.0.1:") })
        let key = FleetKey.generate()
        let machine = FleetMachine()
        let reader = try machine.source(cluster.endpoints, key: key, tls: certificates.goodOptions)
        let watcherMachine = FleetMachine()
        let watcher = try watcherMachine.source(cluster.endpoints, key: key, tls: certificates.goodOptions)
        let log = ChangeLog()
        watcher.startWatching(onChange: log.handler)
        defer { watcher.stopWatching() }
        #expect(await inStep(watcher))

        try reader.publish(Data("tls-v1".utf8), for: "api_key", version: "1")
        #expect(await log.next { $0.version == "1" && $0.kind == .published } != nil)
        let found = try #require(try machine.run { try fleetRetriever([reader]).retrieve("api_key") })
        #expect(found.data == Data("tls-v1".utf8))
        #expect(found.location.hasPrefix("etcd key /keysmith/test/api_key/1"))

        let leader = try cluster.leader()
        await cluster.killing(leader)
        let afterKill = try #require(try machine.run { try reader.lookup("api_key") }.first)
        #expect(afterKill.location.hasPrefix("etcd key"), "served by a surviving member, not the offline copy")
        try await blocking { try reader.publish(Data("tls-v2".utf8), for: "api_key", version: "2") }
        #expect(await log.next { $0.version == "2" && $0.kind == .published } != nil)
        #expect(try machine.run { try reader.lookup("api_key") }.map(\.version).sorted() == ["1", "2"])
    }

    @Test("TLS refusals name their cause: wrong CA, missing, expired or unknown client certificate, server name")
    func tlsFailuresNameTheirCause() async throws {
        let certificates = try await EtcdTestCertificates.make()
        defer { certificates.remove() }
        let cluster = try await EtcdTestCluster.start(members: 1, certificates: certificates)
        defer { cluster.shutdown() }
        let key = FleetKey.generate()
        let machine = FleetMachine()
        let good = try machine.source(cluster.endpoints, key: key, tls: certificates.goodOptions)
        try good.publish(Data("tls-secret".utf8), for: "api_key", version: "1")
        // This machine now holds an offline copy: a TLS refusal must not fall back to it.
        #expect(try machine.run { try good.lookup("api_key") }.first?.data == Data("tls-secret".utf8))

        func refusal(_ tls: EtcdTLSOptions, endpoints: [String]? = nil) throws -> String {
            let source = try machine.source(endpoints ?? cluster.endpoints, key: key, tls: tls)
            do {
                let records = try machine.run { try source.lookup("api_key") }
                return "served \(records.count) record(s): \(records.map(\.location))"
            } catch EtcdError.tlsFailed(_, let reason) {
                return reason
            } catch {
                return "another error: \(error)"
            }
        }
        let wrongCA = try refusal(
            EtcdTLSOptions(
                caFile: certificates.otherCAFile, clientCertificate: certificates.clientCertificate,
                clientKey: certificates.clientKey))
        #expect(wrongCA.contains("is not signed by the CA file \(certificates.otherCAFile)"), "\(wrongCA)")

        let missing = try refusal(EtcdTLSOptions(caFile: certificates.caFile))
        #expect(missing.contains("requires a client certificate and none is configured"), "\(missing)")

        let expired = try refusal(
            EtcdTLSOptions(
                caFile: certificates.caFile, clientCertificate: certificates.expiredClientCertificate,
                clientKey: certificates.path("expired-client.key")))
        #expect(expired.contains("client certificate \(certificates.expiredClientCertificate) expired on"), "\(expired)")

        let stranger = try refusal(
            EtcdTLSOptions(
                caFile: certificates.caFile, clientCertificate: certificates.strangerClientCertificate,
                clientKey: certificates.strangerClientKey))
        #expect(stranger.contains("refused the client certificate \(certificates.strangerClientCertificate)"), "\(stranger)")

        // The certificate names 127.0.0.1, not localhost.
        let port = cluster.members[0].clientPort
        let mismatch = try refusal(certificates.goodOptions, endpoints: ["https://localhost:\(port)"])
        #expect(mismatch.contains("is not issued for localhost"), "\(mismatch)")

        // Settings that cannot work are refused before any connection.
        #expect(throws: EtcdError.self) {
            try EtcdConfiguration(
                endpoints: ["http://127.0.0.1:\(port)"], prefix: "/keysmith/test/", tls: certificates.goodOptions)
        }
        #expect(throws: EtcdError.self) {
            try EtcdConfiguration(
                endpoints: cluster.endpoints, prefix: "/keysmith/test/",
                tls: EtcdTLSOptions(caFile: certificates.caFile, clientCertificate: certificates.clientCertificate))
        }
        #expect(throws: EtcdError.self) {
            try EtcdConfiguration(
                endpoints: cluster.endpoints, prefix: "/keysmith/test/",
                tls: EtcdTLSOptions(caFile: certificates.path("missing.crt")))
        }
    }

    @Test("keysmith fleet init and join with --cacert, --cert and --cert-key keep TLS in the fleet settings")
    func tlsCommands() async throws {
        let certificates = try await EtcdTestCertificates.make()
        defer { certificates.remove() }
        let cluster = try await EtcdTestCluster.start(members: 1, certificates: certificates)
        defer { cluster.shutdown() }
        let first = FleetMachine()
        let second = FleetMachine()
        let endpoints = cluster.endpoints.joined(separator: ",")
        let tls = ["--cacert", certificates.caFile, "--cert", certificates.clientCertificate, "--cert-key", certificates.clientKey]

        var run = keysmith(["fleet", "init", "--endpoints", endpoints, "--prefix", "/keysmith/tls"] + tls, home: first.home)
        #expect(run.status == 0, "\(run.stderr)")
        run = keysmith(["fleet", "put", "api_key", "--version", "1", "--stdin"], home: first.home, input: "tls-key\n")
        #expect(run.status == 0, "\(run.stderr)")
        run = keysmith(["resolve", "api_key", "--fleet", "--reveal", "--quiet"], home: first.home)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "tls-key\n")

        let file = first.home.appendingPathComponent("fleet.key").path
        run = keysmith(["fleet", "export-key", file, "--stdin"], home: first.home, input: "a long passphrase\n")
        #expect(run.status == 0, "\(run.stderr)")
        run = keysmith(
            ["fleet", "join", "--endpoints", endpoints, "--prefix", "/keysmith/tls", "--key", file, "--stdin"] + tls,
            home: second.home, input: "a long passphrase\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("etcd holds 1 key"))
        run = keysmith(["resolve", "api_key", "--fleet", "--reveal", "--quiet"], home: second.home)
        #expect(run.stdout == "tls-key\n")

        // A CA that did not sign etcd's certificate: join says so, exits 1 and keeps the
        // working settings.
        let wrongCA = ["--cacert", certificates.otherCAFile] + tls.dropFirst(2)
        run = keysmith(
            ["fleet", "join", "--endpoints", endpoints, "--prefix", "/keysmith/tls", "--key", file, "--stdin"] + wrongCA,
            home: second.home, input: "a long passphrase\n")
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("not signed by the CA file \(certificates.otherCAFile)"), "\(run.stderr)")
        #expect(run.stderr.contains("nothing was changed"), "\(run.stderr)")
        run = keysmith(["resolve", "api_key", "--fleet", "--reveal", "--quiet"], home: second.home)
        #expect(run.stdout == "tls-key\n", "\(run.stderr)")

        // The CA file kept in the settings is replaced by one that did not sign etcd's
        // certificate (a rotation gone wrong): lookups say so and serve no offline copy, and
        // the watch says why it is not in step rather than wait in silence.
        let keptCA = first.home.appendingPathComponent("kept-ca.crt").path
        try FileManager.default.copyItem(atPath: certificates.caFile, toPath: keptCA)
        run = keysmith(
            ["fleet", "join", "--endpoints", endpoints, "--prefix", "/keysmith/tls", "--key", file, "--stdin",
             "--cacert", keptCA] + tls.dropFirst(2),
            home: second.home, input: "a long passphrase\n")
        #expect(run.status == 0, "\(run.stderr)")
        try FileManager.default.removeItem(atPath: keptCA)
        try FileManager.default.copyItem(atPath: certificates.otherCAFile, toPath: keptCA)
        run = keysmith(["resolve", "api_key", "--fleet", "--reveal", "--quiet"], home: second.home)
        #expect(run.status == 1)
        #expect(run.stderr.contains("TLS connection to etcd at 127.0.0.1:"), "\(run.stderr)")
        #expect(run.stderr.contains("not signed by the CA file \(keptCA)"), "\(run.stderr)")
        #expect(!run.stdout.contains("tls-key"))
        run = keysmith(["fleet", "watch", "--count", "1", "--timeout", "3"], home: second.home)
        #expect(run.status == 1)
        #expect(run.stderr.contains("not in step with etcd"), "\(run.stderr)")
        #expect(run.stderr.contains("not signed by the CA file \(keptCA)"), "\(run.stderr)")
    }
}
