#if !canImport(Security)
import Foundation
@testable import KeychainServices
import Testing

/// The attribute table behind every query and item: a dictionary's answers, with tags
/// compared byte for byte.
struct AttributeTableTests {
    @Test func setGetOverwriteAndRemoveAnswerAsADictionaryDoes() {
        var table = AttributeTable()
        #expect(table.isEmpty && table["acct"] == nil)
        table["acct"] = .string("alice")
        table["svce"] = .data(Data([1, 2, 3]))
        table["acct"] = .string("bob")  // overwrites, does not add
        #expect(table.count == 2)
        #expect(table["acct"] == .string("bob"))
        #expect(table[AttributeTable.Tag("svce")] == .data(Data([1, 2, 3])))
        table["acct"] = nil
        #expect(table.count == 1 && table["acct"] == nil)
        table["nothing"] = nil  // removing what is absent changes nothing
        #expect(table.keys == ["svce"])
    }

    @Test func tagsOfEveryLengthAreDistinctAndRoundTrip() {
        let names = ["", "a", "a\u{0}", "acct", "acct\u{0}", "1234567", "12345678", "123456789", "kSecAttrAccount",
                     "é", "e\u{301}", "\u{212A}eys", "Keys"]
        var table = AttributeTable()
        for (index, name) in names.enumerated() { table[name] = .number(Int64(index)) }
        #expect(table.count == names.count, "no two of these tags are the same")
        for (index, name) in names.enumerated() {
            #expect(table[name] == .number(Int64(index)), "\(name.debugDescription)")
            #expect(AttributeTable.Tag(name).name.utf8.elementsEqual(name.utf8))
        }
        #expect(table.map(\.key) == names, "iterated in the order first set, with the exact spelling")
    }

    @Test func tagsCompareByteForByteNotByCanonicalEquivalence() {
        // Swift's String == equates these; a keychain compares bytes.
        #expect("é" == "e\u{301}")
        #expect(AttributeTable.Tag("é") != AttributeTable.Tag("e\u{301}"))
        #expect(AttributeTable.Tag("\u{212A}eys") != AttributeTable.Tag("Keys"))  // KELVIN SIGN
        let long = "kSecAttrCaf\u{E9}"
        #expect(AttributeTable.Tag(long) == AttributeTable.Tag(long))
        #expect(AttributeTable.Tag(long) != AttributeTable.Tag("kSecAttrCafe\u{301}"))
    }

    @Test func asciiBytesMakeTheSameTagAsTheString() {
        for name in ["", "a", "acct", "1234567"] {
            let bytes = Array(name.utf8)
            let tag = bytes.withUnsafeBytes { AttributeTable.Tag(ascii: $0) }
            #expect(tag == AttributeTable.Tag(name))
        }
        #expect(Array("12345678".utf8).withUnsafeBytes { AttributeTable.Tag(ascii: $0) } == nil, "too long to pack")
        #expect(Array("é".utf8).withUnsafeBytes { AttributeTable.Tag(ascii: $0) } == nil, "not ASCII")
    }

    @Test func equalityIgnoresOrderButNotValuesOrTags() {
        let one: AttributeTable = ["acct": .string("a"), "svce": .string("s")]
        let other: AttributeTable = ["svce": .string("s"), "acct": .string("a")]
        #expect(one == other)
        #expect(one != ["acct": .string("a"), "svce": .data(Data("s".utf8))])
        #expect(one != ["acct": .string("a")])
        #expect(one != ["acct": .string("a"), "labl": .string("s")])
    }

    @Test func storedItemsDecodeToTheSameTableAndKeepNonASCIITags() throws {
        var attributes: AttributeTable = ["acct": .string("alice"), "port": .number(443), "cdat": .date(1.5)]
        attributes["kSecAttrCaf\u{E9}"] = .data(Data([9]))  // long and not ASCII: kept as a string
        attributes["\u{E9}"] = .string("short, not ASCII")
        let buffer = ItemCodec.encode(attributes: attributes, secret: SecretData(Data("s".utf8)))
        let decoded = try ItemCodec.decode(buffer)
        #expect(decoded.attributes == attributes)
        #expect(decoded.attributes["kSecAttrCaf\u{E9}"] == .data(Data([9])))
        #expect(decoded.attributes["\u{E9}"] == .string("short, not ASCII"))
        #expect(decoded.attributes["e\u{301}"] == nil)
    }

    /// A stored item's bytes as ``ItemCodec`` lays them out: string attributes, no secret.
    private func storedItem(_ attributes: [(tag: [UInt8], value: String)]) -> SecretBuffer {
        var bytes: [UInt8] = [1, UInt8(attributes.count), 0]
        for (tag, value) in attributes {
            bytes.append(UInt8(tag.count))
            bytes += tag
            bytes.append(1)  // a string
            bytes += withUnsafeBytes(of: UInt32(value.utf8.count).littleEndian, Array.init)
            bytes += Array(value.utf8)
        }
        bytes.append(0)  // no secret
        let buffer = SecretBuffer(count: bytes.count)
        buffer.withUnsafeMutableBytes { $0.copyBytes(from: bytes) }
        return buffer
    }

    @Test func aStoredTagGivenTwiceKeepsItsLastValue() throws {
        let decoded = try ItemCodec.decode(storedItem([(Array("acct".utf8), "first"), (Array("svce".utf8), "s"),
                                                        (Array("acct".utf8), "last")]))
        #expect(decoded.attributes.count == 2)
        #expect(decoded.attributes["acct"] == .string("last"))
    }

    @Test func aStoredTagThatIsNotUTF8IsReadAsItsRepairedSpelling() throws {
        let decoded = try ItemCodec.decode(storedItem([([0x61, 0xFF, 0x62], "v")]))
        #expect(decoded.attributes.keys == ["a\u{FFFD}b"])
        #expect(decoded.attributes["a\u{FFFD}b"] == .string("v"))
    }
}
#endif
