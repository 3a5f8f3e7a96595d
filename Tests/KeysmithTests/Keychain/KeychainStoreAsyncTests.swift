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

    @Test func test_asyncVariant_runsOffTheMainActorAndResumesOnIt() async throws {
        try await withTemporaryKeychain {
            let store = try KeychainStore(service: uniqueService())
            let probe = ThreadProbe()
            try await Self.roundTripOnMainActor(store, probe: probe)
            // The encoding and decoding happen inside the variants, in the same synchronous
            // stretch as the keychain call: where they ran is where the call ran.
            #expect(probe.callerOnMainThread == [true, true], "the caller was not on the main thread: \(probe.callerOnMainThread)")
            #expect(probe.encodedOnMainThread == [false], "setValue ran its work on the main thread")
            #expect(probe.decodedOnMainThread == [false], "value(_:for:) ran its work on the main thread")
            #expect(probe.resumedOnMainThread == [true, true], "the caller did not resume on the main actor")
        }
    }

    /// Records on which thread the work of the async variants runs.
    final class ThreadProbe: @unchecked Sendable {
        private let lock = NSLock()
        private var records: [String: [Bool]] = [:]
        func record(_ what: String) {
            let onMain = Thread.isMainThread
            lock.lock()
            records[what, default: []].append(onMain)
            lock.unlock()
        }
        private func values(_ what: String) -> [Bool] { lock.lock(); defer { lock.unlock() }; return records[what] ?? [] }
        var callerOnMainThread: [Bool] { values("caller") }
        var encodedOnMainThread: [Bool] { values("encode") }
        var decodedOnMainThread: [Bool] { values("decode") }
        var resumedOnMainThread: [Bool] { values("resumed") }
    }

    /// A value whose encoding and decoding report their thread to the probe (found through
    /// a task-local, since Decodable cannot take arguments).
    struct Probed: Codable, Sendable, Equatable {
        @TaskLocal static var probe: ThreadProbe?
        var text: String
        init(text: String) { self.text = text }
        init(from decoder: Decoder) throws {
            Self.probe?.record("decode")
            text = try decoder.singleValueContainer().decode(String.self)
        }
        func encode(to encoder: Encoder) throws {
            Self.probe?.record("encode")
            var container = encoder.singleValueContainer()
            try container.encode(text)
        }
    }

    /// Awaited from the main actor: the keychain work hops off it (the variants are
    /// `@concurrent`), and the caller resumes on it.
    @MainActor
    static func roundTripOnMainActor(_ store: KeychainStore, probe: ThreadProbe) async throws {
        try await Probed.$probe.withValue(probe) {
            probe.record("caller")
            try await store.setValue(Probed(text: "value"), for: "token")
            probe.record("resumed")
            probe.record("caller")
            #expect(try await store.value(Probed.self, for: "token") == Probed(text: "value"))
            probe.record("resumed")
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
