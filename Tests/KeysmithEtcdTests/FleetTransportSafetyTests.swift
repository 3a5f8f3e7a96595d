import Foundation
import KeysmithEtcd
import Testing

#if os(Linux)
    @testable import KeysmithEtcd
#endif

/// Settings that would weaken TLS are refused before any connection, and the watch stream
/// does not grow without bound on a server that never ends a frame.
@Suite("Fleet transport safety")
struct FleetTransportSafetyTests {
    @Test("https:// and http:// endpoints together are refused: a failover would leave TLS")
    func mixedSchemesAreRefused() throws {
        do {
            _ = try EtcdConfiguration(
                endpoints: ["https://127.0.0.1:2379", "http://127.0.0.1:22379"], prefix: "/keysmith/test/")
            Issue.record("a configuration mixing https:// and http:// was accepted")
        } catch EtcdError.invalidConfiguration(let reason) {
            #expect(reason.contains("http://127.0.0.1:22379 is http://"), "\(reason)")
            #expect(reason.contains("failover would leave TLS"), "\(reason)")
        }
        // All plain, or all TLS, is fine.
        _ = try EtcdConfiguration(endpoints: ["http://127.0.0.1:2379", "http://127.0.0.1:22379"], prefix: "/k/")
        _ = try EtcdConfiguration(endpoints: ["https://127.0.0.1:2379", "https://127.0.0.1:22379"], prefix: "/k/")
    }

    #if os(Linux)
        @Test("A client key every user may read is refused with the chmod that fixes it; 0600 and 0640 are taken")
        func clientKeyOpenToEveryoneIsRefused() async throws {
            let certificates = try await EtcdTestCertificates.make()
            defer { certificates.remove() }
            func configuration(mode: Int) throws -> EtcdConfiguration {
                try FileManager.default.setAttributes(
                    [.posixPermissions: NSNumber(value: mode)], ofItemAtPath: certificates.clientKey)
                return try EtcdConfiguration(
                    endpoints: ["https://127.0.0.1:2379"], prefix: "/keysmith/test/", tls: certificates.goodOptions)
            }
            do {
                _ = try configuration(mode: 0o644)
                Issue.record("a client key readable by every user was accepted")
            } catch let error as EtcdError {
                guard case .invalidConfiguration(let reason) = error else { throw error }
                #expect(reason.contains("may be read by every user"), "\(reason)")
                // The advice is about the settings, not only endpoints and prefix.
                #expect(error.recovery.contains("keysmith fleet join"), "\(error.recovery)")
                #expect(reason.contains("mode 644"), "\(reason)")
                #expect(reason.contains("chmod 600 \(certificates.clientKey)"), "\(reason)")
                // The path, never the key's bytes.
                let key = try String(contentsOfFile: certificates.clientKey, encoding: .utf8)
                let body = key.split(separator: "\n").dropFirst().first.map(String.init) ?? key
                #expect(!reason.contains(body))
            }
            _ = try configuration(mode: 0o600)
            _ = try configuration(mode: 0o640)
        }

        @Test("A watch frame split across reads is put together; one that never ends closes the stream")
        func watchFramesAreBounded() {
            var lines: [String] = []
            let transfer = CurlTransport.Transfer(
                onLine: { lines.append(String(decoding: $0, as: UTF8.self)); return true }, maximumLineLength: 64)
            func take(_ text: String) -> Bool {
                Array(text.utf8).withUnsafeBytes { transfer.take($0) }
            }
            #expect(take("{\"result\":"))
            #expect(take("{\"created\":true}}\n{\"res"))
            #expect(take("ult\":{}}\n"))
            #expect(lines == ["{\"result\":{\"created\":true}}", "{\"result\":{}}"])
            #expect(transfer.oversizedLine == nil)

            // 65 bytes and no newline: the stream is closed with a reason, not kept growing.
            #expect(take(String(repeating: "x", count: 40)))
            #expect(!take(String(repeating: "x", count: 25)))
            #expect(transfer.oversizedLine?.reason.contains("a watch frame longer than 64 bytes") == true)
            #expect(!transfer.closedOnPurpose)
            #expect(lines.count == 2)
        }
    #endif
}
