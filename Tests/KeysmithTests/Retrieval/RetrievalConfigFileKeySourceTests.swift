import Foundation
import Keysmith
import Testing

struct RetrievalConfigFileKeySourceTests {
    private func plist(_ object: [String: Any]) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: object, format: .xml, options: 0)
    }

    @Test func nestedEntryIsBase64WithVersion() throws {
        let data = try plist([
            "api_key": ["value": Data("sk-live-1234".utf8).base64EncodedString(), "version": "2024.06.01"]
        ])
        let source = try ConfigFileKeySource(data: data, format: .plist, path: "Keys.plist")
        let record = try #require(source.lookup("api_key").first)
        #expect(record.string() == "sk-live-1234")
        #expect(record.version == "2024.06.01")
        #expect(record.sourceDescription == "ConfigFile(plist)")
        #expect(record.location == "file Keys.plist, key \"api_key\"")
    }

    @Test func invalidBase64IsAnErrorNamingFileAndKey() throws {
        let data = try plist(["api_key": ["value": "not base64!", "version": "1"]])
        do {
            _ = try ConfigFileKeySource(data: data, format: .plist, path: "Keys.plist")
            Issue.record("expected an error")
        } catch let error as KeyRetrievalError {
            guard case .malformedFile(let path, let key, _) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(path == "Keys.plist")
            #expect(key == "api_key")
            #expect(error.description.contains("base64"))
        }
    }

    @Test func nestedEntryCanSayItsValueIsText() throws {
        let data = try plist(["k": ["value": "plain text", "encoding": "utf8"]])
        let source = try ConfigFileKeySource(data: data, format: .plist)
        #expect(source.lookup("k").first?.string() == "plain text")
        #expect(source.lookup("k").first?.version == "builtin")
    }

    @Test func bareStringIsUTF8TextAndDataIsRawBytes() throws {
        let bytes = Data([0, 1, 2, 255])
        let data = try plist(["text_key": "abcd", "binary_key": bytes])
        let source = try ConfigFileKeySource(data: data, format: .plist)
        // "abcd" is valid base64 too; a bare string is always text.
        #expect(source.lookup("text_key").first?.data == Data("abcd".utf8))
        #expect(source.lookup("binary_key").first?.data == bytes)
        #expect(source.lookup("binary_key").first?.version == "builtin")
    }

    @Test func fileLevelVersionAppliesToEntriesWithoutOne() throws {
        let data = try plist([
            "version": "2024.06.01",
            "a": "text",
            "b": ["value": Data("x".utf8).base64EncodedString(), "version": "2024.07.01"],
        ])
        let source = try ConfigFileKeySource(data: data, format: .plist)
        #expect(source.lookup("a").first?.version == "2024.06.01")
        #expect(source.lookup("b").first?.version == "2024.07.01")
        #expect(source.identifiers() == ["a", "b"])
        #expect(source.lookup("version").isEmpty)
    }

    @Test func aListHoldsSeveralVersions() throws {
        let json = """
            {"db_key": [{"value": "b2xk", "version": "1"}, {"value": "bmV3", "version": "2"}]}
            """
        let source = try ConfigFileKeySource(data: Data(json.utf8))
        #expect(source.format == .json)
        let records = source.lookup("db_key")
        #expect(Set(records.compactMap { $0.string() }) == ["old", "new"])
        #expect(source.sourceDescription == "ConfigFile(json)")
    }

    @Test func jsonFileFromDisk() throws {
        let directory = try makeRetrievalDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("Keys.json")
        try Data(#"{"version": "3", "maps_key": "maps-text", "pin": {"value": "AAEC", "version": 4}}"#.utf8).write(
            to: url)
        let source = try ConfigFileKeySource(url: url)
        #expect(source.lookup("maps_key").first?.version == "3")
        #expect(source.lookup("pin").first?.data == Data([0, 1, 2]))
        #expect(source.lookup("pin").first?.version == "4")
        #expect(source.path == url.path)
    }

    @Test(arguments: [
        #"["not", "a", "dictionary"]"#,
        #"{"k": 42}"#,
        #"{"k": true}"#,
        #"{"k": {"version": "1"}}"#,
        #"{"k": {"value": "abc=", "encoding": "rot13"}}"#,
        #"{"k": ""}"#,
        #"{"k": [{"value": "YQ==", "version": "1"}, {"value": "Yg==", "version": "1.0"}]}"#,
        #"{"k": []}"#,
        #"{"version": "a@b", "k": "x"}"#,
        #"{"k": "x""#,
    ])
    func malformedFilesAreErrorsAtLoad(_ json: String) {
        #expect(throws: KeyRetrievalError.self) { try ConfigFileKeySource(data: Data(json.utf8), format: .json) }
    }

    @Test func missingFileIsAnUnreadableError() {
        do {
            _ = try ConfigFileKeySource(url: URL(fileURLWithPath: "/nonexistent/Keys.plist"))
            Issue.record("expected an error")
        } catch let error as KeyRetrievalError {
            guard case .unreadableFile(let path, _) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(path == "/nonexistent/Keys.plist")
        } catch {
            Issue.record("wrong error type \(error)")
        }
    }

    @Test func lookupIsExact() throws {
        let source = try ConfigFileKeySource(data: Data(#"{"api_key": "x"}"#.utf8))
        #expect(source.lookup("apiKey").isEmpty)
        #expect(source.lookup("API_KEY").isEmpty)
    }

    @Test func conformsToTheSourceContract() async throws {
        let json =
            #"{"version": "1", "api_key": "text-key", "db_key": [{"value": "b2xkLWtleQ==", "version": "1"}, {"value": "bmV3LWtleQ==", "version": "2"}]}"#
        let source = try ConfigFileKeySource(data: Data(json.utf8))
        try await SourceConformance.check(source, expecting: ["api_key": ["1"], "db_key": ["1", "2"]])
    }
}
