// Seeded random and mutated bytes into the key-file parsers (JSON and plist): nothing may
// crash, and every failure must be the documented malformed-file error naming the file.
import Foundation
import Keysmith
import Testing

struct ConfigFileFuzzTests {
    private struct SeededRandom: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    private static let seeds: [(Data, ConfigFileKeySource.Format)] = {
        let json = Data(#"{"version":"2024.6.1","api_key":{"value":"c2VjcmV0","version":"2024.7.1"},"plain":"text","utf":{"value":"hi","encoding":"utf8"}}"#.utf8)
        let plist = try! PropertyListSerialization.data(
            fromPropertyList: ["raw": Data([1, 2, 3]), "nested": ["value": "c2VjcmV0", "version": "1.2"], "version": "1"],
            format: .xml, options: 0)
        return [(json, .json), (plist, .plist)]
    }()

    @Test func randomAndMutatedKeyFilesNeverCrashTheParsers() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededRandom(state: seed)
        let iterations = ProcessInfo.processInfo.environment["KEYSMITH_STRESS"] == "1" ? 200_000 : 5_000
        var parsed = 0
        for iteration in 0..<iterations {
            let (base, format) = Self.seeds[iteration % 2]
            var bytes = [UInt8](base)
            if iteration % 5 == 0 {
                bytes = (0..<Int.random(in: 0..<80, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            } else {
                for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            do {
                let source = try ConfigFileKeySource(
                    data: Data(bytes), format: Bool.random(using: &random) ? format : nil, path: "fuzz.\(format)")
                for name in source.identifiers() { _ = source.lookup(name) }
                parsed += 1
            } catch let error as KeyRetrievalError {
                guard case .malformedFile(let path, _, _) = error else {
                    Issue.record("seed \(seed): unexpected error kind \(error)")
                    continue
                }
                #expect(path == "fuzz.\(format)")
            } catch {
                Issue.record("seed \(seed): undocumented error \(error)")
            }
        }
        #expect(parsed > 0, "some mutations still parse")
    }
}
