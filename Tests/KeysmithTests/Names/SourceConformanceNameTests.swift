import Foundation
import Keysmith
import Testing

/// The conformance check of key sources compares names byte for byte: it passes a source
/// that holds two Unicode twins as two keys, and catches one that serves a twin's key.
struct SourceConformanceNameTests {
    /// Keeps its keys in a `[String: Data]`, so a lookup of one twin finds the other.
    struct TwinBlurringSource: KeySource {
        let keys: [String: Data]
        var kind: KeySourceKind { .remote }
        var sourceDescription: String { "Twin-blurring" }
        func lookup(_ name: String) throws -> [KeyInfo] {
            guard let data = keys[name] else { return [] }
            return [
                KeyInfo(
                    identifier: name, matchedName: name, version: "1", data: data, source: .remote,
                    sourceDescription: sourceDescription)
            ]
        }
        func identifiers() throws -> [String] { Array(keys.keys) }
    }

    @Test func test_sourceHoldingBothTwins_conforms() async {
        let source = CompiledKeySource(
            environmentTag: "debug", salt: [7, 7, 7],
            entries: [
                .init(name: precomposed, version: "v1", nonce: [1], bytes: [0x10, 0x11, 0x12, 0x13]),
                .init(name: decomposed, version: "v1", nonce: [2], bytes: [0x20, 0x21, 0x22, 0x23]),
            ])
        // One expected twin per call: a dictionary literal cannot hold both.
        #expect(await SourceConformance.problems(in: source, expecting: [precomposed: ["v1"]]) == [])
        #expect(await SourceConformance.problems(in: source, expecting: [decomposed: ["v1"]]) == [])
    }

    @Test func test_sourceThatServesATwinsKey_isCaught() async {
        let source = TwinBlurringSource(keys: [precomposed: Data([1, 2, 3, 4])])
        let problems = await SourceConformance.problems(in: source)
        #expect(problems.contains { $0.contains("matching must be exact") })
    }
}
