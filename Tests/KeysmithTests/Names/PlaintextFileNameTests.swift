import Foundation
import Keysmith
import Testing

/// Migrating a plaintext file whose keys differ only in Unicode form: Foundation's parsers
/// read such keys as one (Swift's `String` equality), keeping one value. The migration must
/// then refuse and change nothing, never store one name's value under the other and rewrite
/// the file without the other.
struct PlaintextFileNameTests {
    private func withFile(_ contents: String, _ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keysmith-twins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("secrets.json")
        try Data(contents.utf8).write(to: url)
        try body(url)
    }

    @Test func test_jsonFileWithUnicodeTwinKeys_isRefusedAndKeptWhole() throws {
        // Escaped, as many JSON writers spell non-ASCII names; and raw UTF-8.
        for contents in [
            #"{"token_jos\u00e9": "ALICE-SECRET", "token_jose\u0301": "BOB-SECRET"}"#,
            "{\"token_jos\u{E9}\": \"ALICE-SECRET\", \"other\": [1, {\"x\": \"}\"}], \"token_jose\u{301}\": \"BOB-SECRET\"}",
        ] {
            try withTemporaryKeychain { () throws in
                let store = try SecureStore(servicePrefix: uniqueService())
                try withFile(contents) { (url: URL) throws in
                    #expect(throws: SecureStoreError.self) { try store.migratePlaintext(fromFile: url) }
                    #expect(try Data(contentsOf: url) == Data(contents.utf8))
                    #expect(try store.keys() == [])
                }
            }
        }
    }

    @Test func test_jsonFileWithOneFormOfAnAccentedKey_migrates() throws {
        try withTemporaryKeychain { () throws in
            let store = try SecureStore(servicePrefix: uniqueService())
            try withFile(#"{"token_jose\u0301": "BOB-SECRET", "plain": "P"}"#) { (url: URL) throws in
                let report = try store.migratePlaintext(fromFile: url)
                #expect(report.isComplete)
                #expect(try store.value(String.self, for: "token_\(decomposed)") == "BOB-SECRET")
                #expect(try store.value(String.self, for: "token_\(precomposed)") == nil)
            }
        }
    }
}

/// A property list is read only through Foundation's parser, which cannot show a merged
/// twin: a key with characters of several Unicode forms is refused, an ASCII key migrates.
struct PlaintextPlistNameTests {
    private func plist(_ entries: [(String, String)]) -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict>"
            + entries.map { "<key>\($0.0)</key><string>\($0.1)</string>" }.joined() + "</dict></plist>\n"
    }

    @Test func test_plistWithAKeyOfSeveralUnicodeForms_isRefusedAndKeptWhole() throws {
        try withTemporaryKeychain { () throws in
            let store = try SecureStore(servicePrefix: uniqueService())
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keysmith-plist-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = directory.appendingPathComponent("secrets.plist")
            let contents = plist([("token_\(precomposed)", "ALICE"), ("token_\(decomposed)", "BOB"), ("plain", "P")])
            try Data(contents.utf8).write(to: url)
            let error = #expect(throws: SecureStoreError.self) { try store.migratePlaintext(fromFile: url) }
            #expect(error?.message.contains("Unicode form") == true)
            #expect(try Data(contentsOf: url) == Data(contents.utf8))
            #expect(try store.keys() == [])

            let ascii = plist([("plain", "P")])
            try Data(ascii.utf8).write(to: url)
            #expect(try store.migratePlaintext(fromFile: url).isComplete)
            #expect(try store.value(String.self, for: "plain") == "P")
        }
    }
}
