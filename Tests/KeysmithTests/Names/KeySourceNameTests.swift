import Foundation
import Keysmith
import Testing

/// Key sources look names up byte for byte: a key whose name differs only in Unicode form
/// from another is another key, never an answer for it.
struct KeySourceNameTests {
    @Test func test_compiledSource_answersEachTwinWithItsOwnValue() {
        let source = CompiledKeySource(
            environmentTag: "debug", salt: [7, 7, 7],
            entries: [
                .init(name: precomposed, version: "v1", nonce: [1], bytes: [0x10, 0x11]),
                .init(name: decomposed, version: "v1", nonce: [2], bytes: [0x20, 0x21, 0x22]),
            ])
        let first = source.lookup(precomposed)
        let second = source.lookup(decomposed)
        #expect(first.count == 1)
        #expect(second.count == 1)
        #expect(first.first?.data.count == 2)
        #expect(second.first?.data.count == 3)
        #expect(sortedUTF8(source.identifiers()) == sortedUTF8([precomposed, decomposed]))
    }

    @Test func test_audit_listsEachTwinAsItsOwnKey() throws {
        let source = CompiledKeySource(
            environmentTag: "debug", salt: [7, 7, 7],
            entries: [
                .init(name: precomposed, version: "v1", nonce: [1], bytes: [0x10, 0x11]),
                .init(name: decomposed, version: "v1", nonce: [2], bytes: [0x20, 0x21, 0x22]),
            ])
        let audit = try makeRetrievalRetriever([source]).audit()
        #expect(sortedUTF8(audit.entries.map(\.identifier)) == sortedUTF8([precomposed, decomposed]))
        for entry in audit.entries {
            #expect(entry.copyCount == 1)
            #expect(utf8([entry.effective?.name ?? ""]) == utf8([entry.identifier]))
        }
    }
}

/// A JSON key file with two names that differ only in Unicode form: Foundation's parser
/// reads them as one name, with one of the two values; the file is refused rather than
/// serve one name's key for the other.
struct ConfigFileTwinNameTests {
    @Test func test_jsonKeyFileWithUnicodeTwinNames_isRefusedNamingThem() {
        let json = #"{"token_jos\u00e9": {"value": "QUxJQ0U=", "version": "1"}, "token_jose\u0301": {"value": "Qk9C", "version": "1"}}"#
        do {
            _ = try ConfigFileKeySource(data: Data(json.utf8), format: .json, path: "Keys.json")
            Issue.record("a key file with Unicode twin names was accepted")
        } catch {
            #expect("\(error)".contains("Unicode form"), "\(error)")
        }
    }

    @Test func test_jsonKeyFileWithOneFormOfAnAccentedName_reads() throws {
        let json = #"{"token_jose\u0301": {"value": "Qk9C", "version": "1"}}"#
        let source = try ConfigFileKeySource(data: Data(json.utf8), format: .json, path: "Keys.json")
        #expect(source.lookup("token_\(decomposed)").first?.data == Data("BOB".utf8))
        #expect(source.lookup("token_\(precomposed)").isEmpty)
    }
}
