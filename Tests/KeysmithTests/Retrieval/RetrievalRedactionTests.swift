import Foundation
import Keysmith
import Testing

/// No public description, debug description, mirror, trace, audit, log line or error
/// contains key bytes.
struct RetrievalRedactionTests {
    static let secretText = "S3CR3T-K3Y-MATERIAL-9f8e7d"
    static let secret = Data(secretText.utf8)
    static let binary = Data([0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02, 0x03, 0x04])

    /// Every form the bytes could leak in.
    static func needles(_ data: Data) -> [String] {
        var result = [data.base64EncodedString(), data.map { String(format: "%02x", $0) }.joined()]
        result.append(data.map { String(format: "%02X", $0) }.joined())
        result.append(data.map { String($0) }.joined(separator: ", "))
        if let text = String(data: data, encoding: .utf8) { result.append(text) }
        return result
    }

    static func expectClean(_ text: String, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for needle in needles(secret) + needles(binary) {
            #expect(!text.contains(needle), "\(label) leaks key bytes", sourceLocation: sourceLocation)
        }
    }

    @Test func keyInfoNeverShowsItsBytes() {
        for data in [Self.secret, Self.binary] {
            let info = KeyInfo(
                identifier: "api_key", matchedName: "api_key", version: "1", data: data, source: .keychain,
                sourceDescription: "Keychain")
            var dumped = ""
            dump(info, to: &dumped)
            Self.expectClean(info.description, "description")
            Self.expectClean(info.debugDescription, "debugDescription")
            Self.expectClean(String(reflecting: info), "String(reflecting:)")
            Self.expectClean("\(info)", "interpolation")
            Self.expectClean(dumped, "dump")
            Self.expectClean("\([info])", "array description")
            Self.expectClean("\(Optional(info) as Any)", "optional description")
        }
    }

    private func retriever(release: Bool) -> KeyRetriever {
        let keychain = RetrievalCountingSource(.keychain, ["api_key": [("1", Self.secretText)]])
        let config = RetrievalCountingSource(
            .configFile, ["api_key": [("1", "other-\(Self.secretText)")], "db_key": [("2", Self.secretText)]])
        let environment = EnvironmentKeySource(prefix: "XY", environment: ["XY_TOKEN": Self.secretText])
        return makeRetrievalRetriever(
            [keychain, config, environment], environment: release ? .release : .debug,
            policy: KeyPolicy(sensitive: ["db_key"]))
    }

    @Test func tracesAuditsAndErrorsNeverShowBytes() throws {
        for release in [false, true] {
            let retriever = retriever(release: release)
            for identifier in ["api_key", "db_key", "token", "missing"] {
                Self.expectClean(retriever.explain(identifier).description, "trace of \(identifier)")
                Self.expectClean(String(reflecting: retriever.explain(identifier)), "trace reflection")
                do {
                    _ = try retriever.retrieve(identifier)
                } catch {
                    Self.expectClean("\(error)", "error")
                    Self.expectClean(error.localizedDescription, "localizedDescription")
                }
            }
            let audit = try retriever.audit()
            Self.expectClean(audit.description, "audit")
            Self.expectClean(String(reflecting: audit), "audit reflection")
            var dumped = ""
            dump(audit, to: &dumped)
            Self.expectClean(dumped, "audit dump")
        }
    }

    @Test func logEventsNeverShowBytes() throws {
        let collector = RetrievalLogCollector()
        let retriever = KeyRetriever(
            sources: [RetrievalCountingSource(.keychain, ["api_key": [("1", Self.secretText)]])],
            logging: collector.logging, notificationCenter: nil)
        _ = try retriever.retrieve("api_key")
        #expect(!collector.events.isEmpty)
        for event in collector.events { Self.expectClean(event.description, "log event") }
    }

    @Test func generatedSourceAndGeneratorKeysNeverShowBytes() throws {
        let key = CompiledKeyGenerator.Key(name: "api_key", data: Self.secret)
        Self.expectClean(key.description, "generator key")
        var generator = RetrievalSeededGenerator(state: 7)
        let source = try CompiledKeyGenerator.generateSource(
            [.init(tag: "debug", keys: [key, .init(name: "bin", data: Self.binary)])], using: &generator)
        Self.expectClean(source, "generated source")
    }

    @Test func malformedFileErrorsNeverQuoteValues() {
        let json = #"{"api_key": {"value": "\#(Self.secretText)"}}"#  // not base64
        do {
            _ = try ConfigFileKeySource(data: Data(json.utf8), path: "Keys.json")
            Issue.record("expected an error")
        } catch {
            Self.expectClean("\(error)", "malformed file error")
        }
    }
}
