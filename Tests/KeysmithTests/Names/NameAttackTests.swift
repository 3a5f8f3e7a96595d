import Foundation
import Keysmith
import KeychainServices
import Testing

/// Names that try to reach another name's item: an embedded NUL, a byte prefix, a
/// separator. Each is its own name with its own item.
struct NameAttackTests {
    @Test func test_keyWithEmbeddedNUL_isNotTheKeyBeforeTheNUL() throws {
        try withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try store.set("short", for: "token")
            try store.set("long", for: "token\u{0}admin")
            #expect(try store.string(for: "token") == "short")
            #expect(try store.string(for: "token\u{0}admin") == "long")
            #expect(sortedUTF8(try store.allKeys()) == sortedUTF8(["token", "token\u{0}admin"]))
            try store.remove("token\u{0}admin")
            #expect(try store.string(for: "token") == "short")
        }
    }

    @Test func test_serviceWithEmbeddedNUL_isNotTheServiceBeforeTheNUL() throws {
        try withTemporaryKeychain {
            let base = uniqueService()
            let plain = try KeychainStore(service: base)
            let twin = try KeychainStore(service: base + "\u{0}other")
            try plain.set("plain", for: "k")
            try twin.set("twin", for: "k")
            #expect(try plain.string(for: "k") == "plain")
            #expect(try twin.string(for: "k") == "twin")
        }
    }

    @Test func test_namespaceThatIsABytePrefixOfAnother_listsAndResetsOnlyItself() throws {
        try withTemporaryKeychain {
            let store = try SecureStore(servicePrefix: uniqueService())
            try store.set("a", for: "k", in: .account("al"))
            try store.set("b", for: "k", in: .account("alice"))
            try store.resetNamespace(.account("al"))
            #expect(try store.value(String.self, for: "k", in: .account("alice")) == "b")
            #expect(try store.value(String.self, for: "k", in: .account("al")) == nil)
            #expect(try store.namespaces().map(\.name) == [Namespace.account("alice").name])
        }
    }
}

/// The store's bookkeeping separates the service prefix from a namespace with U+001F, so a
/// prefix holding a control character could name another store's bookkeeping.
struct ServicePrefixControlCharacterTests {
    @Test func test_prefixWithControlCharacter_isRefused() {
        for prefix in ["com.example\u{1F}evil", "com.example\u{0}x", "com.example\nx"] {
            #expect(throws: SecureStoreError.self) { try SecureStore(servicePrefix: prefix) }
        }
    }
}
