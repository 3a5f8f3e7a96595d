// Values that earlier versions of KeychainStore wrote with `setValue(_:for:)` are JSON: a
// string as a quoted JSON string, data as a quoted base64 string. `value(String.self, for:)`
// and `value(Data.self, for:)` decoded that JSON then, and must still read the same value
// now, not the JSON text: a key read as its base64 text is a wrong key.
import Foundation
import Keysmith
import KeychainServices
import Testing

/// Reads through generic code, as a property wrapper over the store does.
private func readGenerically<Value: Decodable>(_ type: Value.Type, from store: KeychainStore, key: String) throws -> Value? {
    try store.value(type, for: key)
}

struct EarlierJSONValueTests {
    @Test func test_valueString_ofAStringAnEarlierVersionStoredAsJSON_isTheString() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            // What `setValue("sk-live-1234", for:)` stored before strings were stored raw.
            try store.set(Data(#""sk-live-1234""#.utf8), for: "api_token")
            #expect(try store.value(String.self, for: "api_token") == "sk-live-1234")
            #expect(try readGenerically(String.self, from: store, key: "api_token") == "sk-live-1234")
        }
    }

    @Test func test_valueData_ofDataAnEarlierVersionStoredAsJSON_isTheBytes() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            let key = Data([0x00, 0x01, 0xFE, 0xFF, 0x10, 0x20])
            // What `setValue(key, for:)` stored: JSONEncoder's base64 string.
            try store.set(try JSONEncoder().encode(key), for: "db_key")
            #expect(try store.value(Data.self, for: "db_key") == key)
            #expect(try readGenerically(Data.self, from: store, key: "db_key") == key)
        }
    }

    @Test func test_olderSetValue_thenValue_roundTrips() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try store.set(try JSONEncoder().encode("with \"quotes\" and \\ slashes"), for: "text")
            #expect(try store.value(String.self, for: "text") == "with \"quotes\" and \\ slashes")
        }
    }

    @Test func test_rawValues_stillReadRaw() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try store.set("plain text", for: "text")
            #expect(try store.value(String.self, for: "text") == "plain text")
            try store.set(#"{"not": "a string"}"#, for: "json")
            #expect(try store.value(String.self, for: "json") == #"{"not": "a string"}"#)
            try store.set(Data([0x22, 0x41, 0x22]), for: "bytes")  // "A" in quotes: not base64 of anything
            #expect(try store.value(Data.self, for: "bytes") == Data([0x22, 0x41, 0x22]))
            #expect(try store.string(for: "text") == "plain text")
        }
    }
}
