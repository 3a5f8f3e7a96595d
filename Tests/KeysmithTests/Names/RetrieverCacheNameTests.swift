import Foundation
import Keysmith
import Testing

/// The retriever's cache holds each identifier byte for byte: a key cached for one name is
/// never served for another name that differs from it only in Unicode form.
struct RetrieverCacheNameTests {
    private func twinSource() -> CompiledKeySource {
        CompiledKeySource(
            environmentTag: "debug", salt: [7, 7, 7],
            entries: [
                .init(name: precomposed, version: "v1", nonce: [1], bytes: [0x10, 0x11]),
                .init(name: decomposed, version: "v1", nonce: [2], bytes: [0x20, 0x21, 0x22]),
            ])
    }

    @Test func test_retrieve_afterTwinWasCached_servesItsOwnKey() throws {
        let retriever = makeRetrievalRetriever([twinSource()])
        let first = try #require(try retriever.retrieve(precomposed))
        let second = try #require(try retriever.retrieve(decomposed))
        #expect(first.data.count == 2)
        #expect(second.data.count == 3)
        #expect(utf8([second.matchedName]) == utf8([decomposed]))
        // And again, now both are cached.
        #expect(try retriever.retrieve(precomposed)?.data.count == 2)
        #expect(try retriever.retrieve(decomposed)?.data.count == 3)
    }

    @Test func test_retrieveExactVersion_afterTwinWasCached_servesItsOwnKey() throws {
        let retriever = makeRetrievalRetriever([twinSource()])
        #expect(try retriever.retrieve(decomposed, version: "v1")?.data.count == 3)
        #expect(try retriever.retrieve(precomposed, version: "v1")?.data.count == 2)
    }

    @Test func test_retrieveMinimumVersion_afterTwinWasCached_servesItsOwnKey() throws {
        let retriever = makeRetrievalRetriever([twinSource()])
        #expect(try retriever.retrieve(precomposed)?.data.count == 2)
        #expect(try retriever.retrieve(decomposed, minVersion: "v1")?.data.count == 3)
    }

    @Test func test_explain_doesNotCallATwinCached() throws {
        let retriever = makeRetrievalRetriever([twinSource()])
        _ = try retriever.retrieve(precomposed)
        #expect(retriever.explain(decomposed).wasCached == false)
        #expect(retriever.explain(precomposed).wasCached == true)
    }
}

/// The policy errs on the safe side: the other Unicode form of a sensitive name is sensitive
/// too, so no spelling of a sensitive key is served from a plaintext source.
struct KeyPolicyNameTests {
    @Test func test_unicodeTwinOfASensitiveName_isSensitive() {
        let policy = KeyPolicy(sensitive: ["token_\(precomposed)"], enforcement: .always)
        #expect(policy.isSensitive("token_\(decomposed)"))
        #expect(policy.isSensitive("TOKEN_\(decomposed)"))
        #expect(!policy.allows("token_\(decomposed)", from: .configFile, isRelease: false))
    }
}
