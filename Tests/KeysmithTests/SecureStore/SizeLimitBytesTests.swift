import Foundation
import Keysmith
import KeychainServices
import Testing

/// The size limit counts user-perceived characters, as documented, and also bounds the
/// bytes: four UTF-8 bytes per character of the limit, the size of the longest single
/// code point, so that one "character" of many combining marks cannot carry megabytes.
struct SizeLimitBytesTests {
    @Test func test_oneCharacterOfManyCodePoints_isRefused_andNothingIsStored() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            let oneCharacter = "e" + String(repeating: "\u{301}", count: 100_000)
            #expect(oneCharacter.count == 1)
            let error = try #require(#expect(throws: SecureStoreError.self) { try store.set(oneCharacter, for: "k") })
            #expect(error.code == .limitExceeded)
            #expect(error.message.contains("200001 bytes"))
            #expect(error.message.contains("8192 bytes"))
            #expect(try store.contains("k") == false)
        }
    }

    @Test func test_limitOfCharactersEachOfSeveralCodePoints_isRefusedByBytes() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            // 2,048 characters of 5 bytes each (e, U+0301, U+0302): within the characters, over the bytes.
            let text = String(repeating: "e\u{301}\u{302}", count: 2048)
            #expect(text.count == 2048)
            let error = try #require(#expect(throws: SecureStoreError.self) { try store.set(text, for: "k") })
            #expect(error.code == .limitExceeded)
            #expect(error.message.contains("2048 characters"))
        }
    }

    @Test func test_limitOfCharactersOfAnyScript_fits() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            for character in ["a", "\u{E9}", "\u{4E2D}", "\u{1F600}"] {
                let text = String(repeating: character, count: 2048)
                try store.set(text, for: "k")
                #expect(try store.string(for: "k") == text)
            }
        }
    }

    @Test func test_byteBound_followsAConfiguredLimit_andAnUnboundedOneStaysUnbounded() throws {
        try withTemporaryKeychain {
            let small = try makeStore(sizeLimit: 2)
            try small.set("\u{1F600}\u{1F600}", for: "k")
            #expect(throws: SecureStoreError.self) { try small.set("e\u{301}\u{301}\u{301}\u{301}", for: "k") }
            let unbounded = try makeStore(sizeLimit: Int.max)
            try unbounded.set(String(repeating: "e\u{301}", count: 10), for: "k")
        }
    }
}
