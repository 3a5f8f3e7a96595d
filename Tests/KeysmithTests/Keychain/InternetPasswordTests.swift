import Foundation
import Keysmith
import KeychainServices
import Testing

struct InternetPasswordTests {
    @Test func test_internetPasswords_storedByServerAndAccount() throws {
        try withTemporaryKeychain {
            let host = "api-\(UUID().uuidString.prefix(6)).example.com"
            let server = try InternetServer(host: host, protocol: .https, port: 443, path: "/v1")
            let store = try KeychainStore(server: server)
            try store.set("hunter2", for: "alice@example.com", label: "Example API")
            try store.set("correct horse", for: "bob@example.com")

            #expect(try store.string(for: "alice@example.com") == "hunter2")
            #expect(try store.allKeys() == ["alice@example.com", "bob@example.com"])
            let attributes = try #require(try store.attributes(for: "alice@example.com"))
            #expect(attributes.service == host)
            #expect(attributes.label == "Example API")
            #expect(store.service == host)
            #expect(server.description == "https://\(host):443/v1")
        }
    }

    @Test func test_internetAndGenericPasswords_doNotMix() throws {
        try withTemporaryKeychain {
            let name = "shared-\(UUID().uuidString.prefix(6)).example.com"
            let web = try KeychainStore(server: try InternetServer(host: name))
            let generic = try KeychainStore(service: name)
            try web.set("web", for: "alice")
            try generic.set("generic", for: "alice")
            #expect(try web.string(for: "alice") == "web")
            #expect(try generic.string(for: "alice") == "generic")
            try web.removeAll()
            #expect(try generic.string(for: "alice") == "generic")
        }
    }

    @Test func test_differentProtocols_areDifferentItems() throws {
        try withTemporaryKeychain {
            let host = "mail-\(UUID().uuidString.prefix(6)).example.com"
            let imap = try KeychainStore(server: try InternetServer(host: host, protocol: .imaps))
            let smtp = try KeychainStore(server: try InternetServer(host: host, protocol: .smtp))
            try imap.set("imap-password", for: "alice")
            #expect(try smtp.string(for: "alice") == nil)
        }
    }

    @Test func test_invalidServer_isRejected() {
        #expect(throws: KeychainError.self) { try InternetServer(host: "") }
        #expect(throws: KeychainError.self) { try InternetServer(host: "example.com", port: 70_000) }
    }

    @Test(arguments: InternetProtocol.allCases)
    func test_protocolValues_areFourCharacters(_ value: InternetProtocol) {
        #expect((value.secValue as String).count == 4)
    }
}
