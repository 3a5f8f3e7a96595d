import Foundation
import Keysmith
import Testing

/// ``ExactName`` compares, hashes, orders and matches prefixes by UTF-8 bytes, where Swift's
/// `String` uses canonical equivalence.
struct ExactNameTests {
    @Test func test_unicodeTwins_areEqualStrings_butDifferentNames() {
        // The premise: Swift equates the two spellings.
        #expect(precomposed == decomposed)
        #expect(ExactName(precomposed) != ExactName(decomposed))
        #expect(ExactName(precomposed) == ExactName("jos\u{E9}"))
    }

    @Test func test_twins_areTwoDictionaryKeysAndTwoSetMembers() {
        var values: [ExactName: String] = [:]
        values[ExactName(precomposed)] = "one"
        values[ExactName(decomposed)] = "two"
        #expect(values.count == 2)
        #expect(values[ExactName(precomposed)] == "one")
        #expect(values[ExactName(decomposed)] == "two")
        #expect(Set([ExactName(precomposed), ExactName(decomposed), ExactName(precomposed)]).count == 2)
    }

    @Test func test_order_isUTF8ByteOrder() {
        // U+0065 then U+0301 (bytes 65 CC 81) comes before U+00E9 (C3 A9).
        #expect(ExactName(decomposed) < ExactName(precomposed))
        #expect(!(ExactName(precomposed) < ExactName(decomposed)))
        // Byte order is code point order, also beyond the Basic Multilingual Plane: U+FFFD < U+1F600.
        #expect(ExactName("\u{FFFD}") < ExactName("\u{1F600}"))
        #expect(ExactName("a") < ExactName("ab"))
    }

    @Test func test_distinctSorted_keepsEachSpellingOnce() {
        let names = ExactName.distinctSorted([precomposed, "b", decomposed, precomposed, "a"])
        #expect(utf8(names) == utf8(["a", "b", decomposed, precomposed]))
    }

    @Test func test_hasPrefix_comparesBytes() {
        // Swift's hasPrefix works on characters: "." + U+0301 is one character, so it says no.
        #expect(!"com.app.\u{301}x".hasPrefix("com.app."))
        #expect(ExactName("com.app.\u{301}x").hasPrefix(ExactName("com.app.")))
        #expect(ExactName("com.app.\u{301}x").droppingPrefix(ExactName("com.app.")) == "\u{301}x")
        // And it treats the twins as one prefix; bytes do not.
        #expect("account_\(decomposed).auth".hasPrefix("account_\(precomposed)"))
        #expect(!ExactName("account_\(decomposed).auth").hasPrefix(ExactName("account_\(precomposed)")))
        #expect(ExactName("account_\(decomposed)").droppingPrefix(ExactName("account_\(precomposed)")) == nil)
        #expect(ExactName("same").droppingPrefix(ExactName("same")) == "")
    }

    @Test func test_same_comparesOptionalNames() {
        #expect(ExactName.same(nil, nil))
        #expect(!ExactName.same(precomposed, nil))
        #expect(!ExactName.same(precomposed, decomposed))
        #expect(ExactName.same("group", "group"))
    }

    @Test func test_hash_ofANonContiguousString_matchesTheContiguousOne() {
        // A bridged or lazily built string may not have contiguous UTF-8; its hash must agree.
        let built = String(decoding: Array("com.example.\(precomposed)".utf8), as: UTF8.self)
        let bridged = NSString(string: "com.example.\(precomposed)") as String
        #expect(ExactName(built) == ExactName(bridged))
        #expect(ExactName(built).hashValue == ExactName(bridged).hashValue)
    }
}
