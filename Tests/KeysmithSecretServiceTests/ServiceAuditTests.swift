import Foundation
import Testing

/// `keysmith audit --secret-service`: which bus client read which item, never the secret.
@Suite("Secret Service reads in keysmith audit")
struct ServiceAuditTests {
    @Test("a read by secret-tool is listed with its process and executable, and the item's names, never the secret")
    func readsAreListed() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        #expect(try fixture.secretTool(["store", "--label=Audited", "service", "audited-svc", "account", "au"], input: "never-shown").status == 0)
        #expect(try fixture.secretTool(["lookup", "service", "audited-svc", "account", "au"]).output == "never-shown")
        let audit = try fixture.keysmith(["--json", "audit", "--secret-service"])
        #expect(audit.status == 0, "\(audit)")
        #expect(!audit.output.contains("never-shown"))
        let document = try JSONSerialization.jsonObject(with: Data(audit.output.utf8)) as? [String: Any]
        let reads = document?["reads"] as? [[String: Any]] ?? []
        #expect(!reads.isEmpty, "\(audit)")
        for read in reads {
            #expect(read["executable"] as? String == "/usr/bin/secret-tool", "\(read)")
            #expect((read["pid"] as? Int ?? 0) > 0, "\(read)")
            #expect(read["service"] as? String == "audited-svc", "\(read)")
            #expect(read["account"] as? String == "au", "\(read)")
            #expect(read["collection"] as? String == "login", "\(read)")
        }
        let table = try fixture.keysmith(["audit", "--secret-service"])
        #expect(table.output.contains("/usr/bin/secret-tool") && table.output.contains("audited-svc"), "\(table)")
        // The log on disk holds neither the secret nor the item's names.
        let log = try Data(contentsOf: fixture.keychain.appendingPathComponent("secret-service-reads.log"))
        #expect(log.range(of: Data("never-shown".utf8)) == nil)
        #expect(log.range(of: Data("audited-svc".utf8)) == nil)
    }
}
