import Foundation
import Keysmith
import KeychainServices
import Testing

struct KeychainStoreAsyncTests {
    @Test func test_asyncVariants_roundTrip() async throws {
        try await withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try await store.set(Data([1, 2, 3]), for: "blob")
            try await store.set("token-value", for: "token")
            try await store.setValue(sampleProfile, for: "profile")

            #expect(try await store.data(for: "blob") == Data([1, 2, 3]))
            #expect(try await store.string(for: "token") == "token-value")
            #expect(try await store.value(Profile.self, for: "profile") == sampleProfile)
            #expect(try await store.contains("token"))
            #expect(try await store.attributes(for: "token")?.key == "token")
            #expect(try await store.allKeys() == ["blob", "profile", "token"])
            try await store.remove("blob")
            #expect(try await store.data(for: "blob") == nil)
            try await store.removeAll()
            #expect(try await store.allKeys() == [])
        }
    }

    @Test func test_asyncVariant_leavesTheMainActorFreeWhileItWorks() async throws {
        try await withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            let probe = MainActorProbe()
            try await Self.roundTripOnMainActor(store, probe: probe)
            // Encoding and decoding happen inside the variants, in the same synchronous
            // stretch as the keychain call. From there the probe asks the main actor to run a
            // job and waits for it: that job runs only if the variant is not holding the main
            // actor (it would wait forever, cut to 10 s, if the work ran on it).
            #expect(probe.results == ["encode": true, "decode": true], "\(probe.results)")
        }
    }

    /// Records, for work done inside a variant, whether the main actor was free meanwhile.
    final class MainActorProbe: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [String: Bool] = [:]
        func checkMainActorIsFree(_ what: String) {
            let ran = DispatchSemaphore(value: 0)
            Task { @MainActor in ran.signal() }
            let free = ran.wait(timeout: .now() + 10) == .success
            lock.lock()
            stored[what] = free
            lock.unlock()
        }
        var results: [String: Bool] { lock.lock(); defer { lock.unlock() }; return stored }
    }

    /// A value whose encoding and decoding consult the probe (found through a task-local,
    /// since Decodable cannot take arguments).
    struct Probed: Codable, Sendable, Equatable {
        @TaskLocal static var probe: MainActorProbe?
        var text: String
        init(text: String) { self.text = text }
        init(from decoder: Decoder) throws {
            Self.probe?.checkMainActorIsFree("decode")
            text = try decoder.singleValueContainer().decode(String.self)
        }
        func encode(to encoder: Encoder) throws {
            Self.probe?.checkMainActorIsFree("encode")
            var container = encoder.singleValueContainer()
            try container.encode(text)
        }
    }

    /// Awaited from the main actor, as an app's UI code would.
    @MainActor
    static func roundTripOnMainActor(_ store: KeychainStore, probe: MainActorProbe) async throws {
        try await Probed.$probe.withValue(probe) {
            try await store.setValue(Probed(text: "value"), for: "token")
            #expect(try await store.value(Probed.self, for: "token") == Probed(text: "value"))
        }
    }

    @Test func test_manyConcurrentReadersAndWriters() async throws {
        try await withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await store.set("value-\(index)", for: "key-\(index % 5)")
                        _ = try await store.string(for: "key-\(index % 5)")
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await store.allKeys() == ["key-0", "key-1", "key-2", "key-3", "key-4"])
        }
    }
}
