import Foundation
import Keysmith
import KeychainServices
import Testing

struct SecureStoreLoggingTests {
    @Test func test_logger_seesKeysNamespacesAndOutcomes() throws {
        try withTemporaryKeychain {
            let recorder = EventRecorder()
            let store = try makeStore(logger: recorder.logger)
            try store.set("access_token", "v", in: "auth")
            _ = try store.get("access_token", as: String.self, in: "auth")
            try store.remove("access_token", in: "auth")
            let events = recorder.events
            #expect(events.map(\.operation) == [.set, .get, .remove])
            #expect(events.allSatisfy { $0.namespace == "auth" && $0.key == "access_token" && $0.outcome == .success })
            #expect(events[0].description == "set auth/access_token: success")
        }
    }

    @Test func test_failures_areLoggedWithTheirCode() throws {
        try withTemporaryKeychain {
            let recorder = EventRecorder()
            let faults = ErrorInjection()
            let store = try makeStore(errorInjection: faults, logger: recorder.logger)
            faults.failNext(with: errSecInteractionNotAllowed)
            _ = try? store.get("token", as: String.self, in: "auth")
            _ = try? store.set("big", String(repeating: "x", count: 5000), in: "auth")
            #expect(recorder.events.map(\.outcome) == [.failure(.interactionNotAllowed), .failure(.limitExceeded)])
        }
    }

    @Test func test_noValueEverReachesTheLogger() throws {
        try withTemporaryKeychain {
            try withTemporaryDefaults { defaults in
                let recorder = EventRecorder()
                let faults = ErrorInjection()
                let store = try makeStore(errorInjection: faults, biometry: .fixed(.unavailable(reason: "none")), logger: recorder.logger)
                let secrets = ["SECRET-A-1f3", "SECRET-B-9c2", "SECRET-C-77d", "SECRET-D-e01", "SECRET-E-5aa"]

                try store.set("token", secrets[0], in: "auth")
                try store.set("profile", ["name": secrets[1]], in: "profile")
                _ = try store.get("token", as: String.self, in: "auth")
                _ = try store.get("profile", as: [String: String].self, in: "profile")
                try store.setBiometricProtected("pin", secrets[2], in: "pin")
                faults.failNext(with: errSecAuthFailed)
                _ = try? store.set("token", secrets[3], in: "auth")
                _ = try? store.set("big", secrets[4] + String(repeating: "x", count: 3000), in: "auth")
                defaults.set(secrets[3], forKey: "legacy")
                try store.migratePlaintext(from: defaults, keys: ["legacy"], in: "auth")
                try store.resetNamespace("auth")

                let events = recorder.events
                #expect(events.count >= 9)
                for event in events {
                    let text = [event.description, String(reflecting: event), "\(event.outcome)", event.key ?? "", event.namespace]
                        .joined(separator: " ")
                    for secret in secrets {
                        #expect(!text.contains(secret), "event \(event.operation) leaked a value")
                    }
                }
            }
        }
    }
}
