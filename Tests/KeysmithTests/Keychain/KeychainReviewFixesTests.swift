import Foundation
import Keysmith
import KeychainServices
import Testing

/// Regression tests for the review of KeychainStore.
struct KeychainReviewFixesTests {
    // Finding 3: a store without a port must not touch the passwords of specific ports.
    @Test func test_portlessInternetStore_neverOverwritesOrDeletesOtherPorts() throws {
        try withTemporaryKeychain {
            let host = "ports-\(UUID().uuidString.prefix(6)).example.com"
            let portless = try KeychainStore(server: try InternetServer(host: host))
            let https443 = try KeychainStore(server: try InternetServer(host: host, port: 443))
            let withPath = try KeychainStore(server: try InternetServer(host: host, path: "/v1"))
            let withRealm = try KeychainStore(
                server: try InternetServer(host: host, authenticationType: .httpBasic, securityDomain: "realm"))
            try https443.set("port-443", for: "alice")
            try withPath.set("path-v1", for: "alice")
            try withRealm.set("realm", for: "alice")

            try portless.set("portless", for: "alice")
            #expect(try https443.string(for: "alice") == "port-443")
            #expect(try withPath.string(for: "alice") == "path-v1")
            #expect(try withRealm.string(for: "alice") == "realm")
            #expect(try portless.string(for: "alice") == "portless")
            #expect(try portless.allKeys() == ["alice"])

            try portless.remove("alice")
            #expect(try https443.string(for: "alice") == "port-443")
            try portless.set("portless", for: "bob")
            try portless.removeAll()
            #expect(try https443.string(for: "alice") == "port-443")
            #expect(try withPath.string(for: "alice") == "path-v1")
            #expect(try withRealm.string(for: "alice") == "realm")
            #expect(try portless.allKeys() == [])
        }
    }

    // Finding 6: an injected failure must not carry the diagnosis of an earlier real failure.
    @Test func test_injectedFailure_hasNoStaleEngineDiagnosis() throws {
        try withTemporaryKeychain {
            let notEntitled = try KeychainStore(service: uniqueService(), accessGroup: "com.example.not-entitled")
            let real = #expect(throws: KeychainError.self) { try notEntitled.set("x", for: "k") }
            #if os(Linux)
            #expect(real?.detail != nil)
            #endif

            let faults = ErrorInjection()
            let store = try KeychainStore(service: uniqueService(), errorInjection: faults)
            faults.failNext(.copyMatching, with: errSecInteractionNotAllowed)
            let injected = #expect(throws: KeychainError.self) { try store.string(for: "token") }
            #expect(injected?.code == .interactionNotAllowed)
            #expect(injected?.detail == nil)
            if let stale = real?.detail {
                #expect(injected?.description.contains(stale) == false)
            }

            faults.failNext(.copyMatching, with: errSecInteractionNotAllowed)
            let listing = #expect(throws: KeychainError.self) {
                try KeychainStore.genericPasswordServices(errorInjection: faults)
            }
            #expect(listing?.detail == nil)
        }
    }
}
