import Foundation
import KeychainServices
import Keysmith
import KeysmithCLI
import KeysmithEtcd
import KeysmithFleetCLI
import Testing

/// A put whose answer never came says that its outcome is unknown, and putting the same
/// bytes again is safe.
@Suite("Fleet write outcomes", .serialized)
struct FleetOutcomeTests {
    @Test("etcd frozen during a put: the outcome is unknown (exit status 75); the same put again succeeds")
    func unknownOutcomeThenRepeat() async throws {
        let cluster = try await EtcdTestCluster.start(members: 1)
        defer { cluster.shutdown() }
        let machine = FleetMachine()
        let fleet = try machine.source(cluster.endpoints, key: FleetKey.generate())
        #expect(try fleet.publish(Data("one".utf8), for: "api_key", version: "1") == .created)
        // The same bytes again: a no-op, not "exists".
        #expect(try fleet.publish(Data("one".utf8), for: "api_key", version: "1") == .unchanged)
        #expect(throws: EtcdError.versionExists(identifier: "api_key", version: "1")) {
            try fleet.publish(Data("other".utf8), for: "api_key", version: "1")
        }

        await cluster.freezing(0)
        let nine = Data("nine".utf8)
        let frozen = await blocking { () -> EtcdError? in
            do {
                try fleet.publish(nine, for: "api_key", version: "9")
                return nil
            } catch {
                return error as? EtcdError
            }
        }
        cluster.thaw(0)
        guard case .outcomeUnknown(let operation, _)? = frozen else {
            Issue.record("expected an unknown outcome, got \(String(describing: frozen))")
            return
        }
        #expect(operation == "publishing version 9 of \"api_key\"")
        #expect(frozen.map(FleetCommands.map)?.exitCode == .outcomeUnknown)
        #expect(frozen?.recovery.contains("same bytes") == true)

        // Whatever etcd did with it, the same put again succeeds, and then is a no-op.
        let again = try await blocking { try fleet.publish(nine, for: "api_key", version: "9") }
        #expect(again == .created || again == .unchanged)
        #expect(try fleet.publish(nine, for: "api_key", version: "9") == .unchanged)
        #expect(try machine.run { try fleet.lookup("api_key") }.map(\.version).sorted() == ["1", "9"])

        // Through the tool: a repeated put of the same bytes exits 0 and says nothing changed.
        let tool = FleetMachine()
        let endpoints = cluster.endpoints.joined(separator: ",")
        var run = keysmith(["fleet", "init", "--endpoints", endpoints, "--prefix", "/keysmith/outcome"], home: tool.home)
        #expect(run.status == 0, "\(run.stderr)")
        run = keysmith(["fleet", "put", "db_key", "--version", "1", "--stdin"], home: tool.home, input: "db-bytes\n")
        #expect(run.status == 0, "\(run.stderr)")
        run = keysmith(["fleet", "put", "db_key", "--version", "1", "--stdin"], home: tool.home, input: "db-bytes\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("already holds these") && run.stdout.contains("nothing changed"), "\(run.stdout)")
        run = keysmith(["fleet", "put", "db_key", "--version", "1", "--stdin"], home: tool.home, input: "other-bytes\n")
        #expect(run.status == 1)
        #expect(run.stderr.contains("already exists in etcd"), "\(run.stderr)")

        // A put through the tool while etcd is frozen: either it says etcd did not answer
        // (exit 1), and then the version is not there once etcd resumes, or it says the
        // outcome is unknown (exit 75). Never "did not answer" for a write that landed.
        await cluster.freezing(0)
        let home = tool.home
        let frozenRun = await blocking {
            keysmith(["fleet", "put", "db_key", "--version", "2", "--stdin"], home: home, input: "db-two\n")
        }
        cluster.thaw(0)
        #expect(frozenRun.status == 1 || frozenRun.status == 75, "\(frozenRun.stderr)")
        let listed = await blocking { () -> FleetRun in
            // Polled: etcd may take a moment to answer again.
            var last = keysmith(["--json", "fleet", "list"], home: home)
            let deadline = Date().addingTimeInterval(30)
            while last.status != 0, Date() < deadline {
                Thread.sleep(forTimeInterval: 0.2)
                last = keysmith(["--json", "fleet", "list"], home: home)
            }
            return last
        }
        #expect(listed.status == 0, "\(listed.stderr)")
        if frozenRun.status == 1 {
            #expect(frozenRun.stderr.contains("no etcd endpoint answered"), "\(frozenRun.stderr)")
            #expect(!listed.stdout.contains("\"2\""), "a put reported as not answered must not have landed: \(listed.stdout)")
        } else {
            #expect(frozenRun.stderr.contains("is unknown"), "\(frozenRun.stderr)")
        }
    }
}
