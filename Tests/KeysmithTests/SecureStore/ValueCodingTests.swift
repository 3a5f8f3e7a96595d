import Foundation
import Keysmith
import KeychainServices
import Testing

struct ValueCodingTests {
    @Test func test_nil_isRejectedWithAdviceToRemove() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("token", "existing", in: "auth")
            let missing: String? = nil
            let error = try #require(#expect(throws: SecureStoreError.self) { try store.set("token", missing, in: "auth") })
            #expect(error.code == .invalidValue)
            #expect(error.key == "token")
            #expect(error.message.contains("remove"))
            // Nothing was changed.
            #expect(try store.get("token", as: String.self, in: "auth") == "existing")
        }
    }

    @Test func test_valueEncodingToNull_isRejected() throws {
        struct Nothing: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encodeNil()
            }
        }
        try withTemporaryKeychain {
            let store = try makeStore()
            #expect(#expect(throws: SecureStoreError.self) { try store.set("k", Nothing()) }?.code == .invalidValue)
        }
    }

    @Test func test_optionalWithValue_isStoredAsTheValue() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            let present: String? = "here"
            try store.set("k", present)
            #expect(try store.get("k", as: String.self) == "here")
        }
    }

    @Test func test_sizeLimit_defaultIs2048Characters() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            #expect(store.configuration.sizeLimit == 2048)
            try store.set("exact", String(repeating: "a", count: 2048))
            let error = try #require(
                #expect(throws: SecureStoreError.self) { try store.set("avatar", String(repeating: "a", count: 2049), in: "profile") })
            #expect(error.code == .limitExceeded)
            #expect(error.key == "avatar")
            #expect(error.message.contains("'avatar'"))
            #expect(error.message.contains("2049"))
            #expect(error.message.contains("2048"))
            #expect(try store.contains("avatar", in: "profile") == false)
        }
    }

    @Test func test_sizeLimit_isConfigurable_andCountsTheSerializedForm() throws {
        try withTemporaryKeychain {
            let store = try makeStore(sizeLimit: 10)
            try store.set("short", "0123456789")
            // [1,2,3,4,5] is 11 characters of JSON.
            let error = #expect(throws: SecureStoreError.self) { try store.set("list", [1, 2, 3, 4, 5]) }
            #expect(error?.code == .limitExceeded)
            #expect(error?.message.contains("11") == true)
        }
    }

    @Test func test_strings_areStoredRaw() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("greeting", "hello")
            let keychain = try KeychainStore(service: store.service(for: .default))
            #expect(try keychain.data(for: "greeting") == Data("hello".utf8))
        }
    }

    @Test func test_rawStringsWrittenByOlderCode_readBack() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            let legacy = try KeychainStore(service: store.service(for: "legacy"))
            try legacy.set("plain-token", for: "token")
            try legacy.set("123", for: "numeric-looking")
            try legacy.set("https://example.com/a", for: "url")
            #expect(try store.get("token", as: String.self, in: "legacy") == "plain-token")
            // A string stays the text it was, even when it looks like JSON.
            #expect(try store.get("numeric-looking", as: String.self, in: "legacy") == "123")
            // String-backed types read raw text too.
            #expect(try store.get("url", as: URL.self, in: "legacy") == URL(string: "https://example.com/a"))
        }
    }

    @Test func test_wrongType_isDecodingFailedWithoutTheValue() throws {
        try withTemporaryKeychain {
            let store = try makeStore()
            try store.set("profile", "SECRET-NOT-A-PROFILE")
            let error = try #require(#expect(throws: SecureStoreError.self) { try store.get("profile", as: Profile.self) })
            #expect(error.code == .decodingFailed)
            #expect(!error.description.contains("SECRET"))
        }
    }
}
