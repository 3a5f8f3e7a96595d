// Seeded random input, for a bounded time: random query dictionaries into the four SecItem
// calls, and random or mutated bytes into the item decoder. Nothing may crash, and every
// status must be one the engine documents. (libFuzzer would need a -sanitize=fuzzer
// toolchain build of the whole package; a seeded generator runs everywhere and is
// reproducible: the seed is in the failure message.)
import Foundation
@testable import KeychainServices
import Testing

/// The statuses SecItem calls may return here (docs/ENGINE.md).
let documentedStatuses: Set<OSStatus> = [
    errSecSuccess, errSecUnimplemented, errSecDiskFull, errSecIO, errSecParam, errSecWrPerm, errSecAllocate,
    errSecNotAvailable, errSecReadOnly, errSecAuthFailed, errSecDuplicateItem, errSecItemNotFound, errSecNoSuchAttr,
    errSecNoSuchClass, errSecInteractionNotAllowed, errSecDecode, errSecMissingEntitlement, errSecUserCanceled,
    errSecDataTooLarge,
]

struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

struct QueryFuzzer {
    var random: SeededRandom

    static let knownKeys: [String] = [
        "class", "acct", "svce", "agrp", "pdmn", "sync", "labl", "icmt", "desc", "gena", "srvr", "ptcl", "port", "path",
        "sdmn", "atyp", "kcls", "klbl", "atag", "type", "bsiz", "issr", "slnr", "ctyp", "cdat", "mdat", "accc", "musr",
        "tomb", "binn", "v_Data", "v_PersistentRef", "v_Ref", "r_Data", "r_Attributes", "r_Ref", "r_PersistentRef",
        "m_Limit", "m_HostOrSubdomainOfHost", "m_Issuers", "m_CaseInsensitive", "u_AuthUI", "u_OpPrompt", "u_ItemList",
        "u_AuthCtx", "nleg", "clip", "persistref", "zzzz", "c", "x_Unknown", "",
    ]
    static let knownValues: [String] = [
        "genp", "inet", "keys", "cert", "idnt", "apls", "ak", "cku", "akpu", "syna", "m_LimitOne", "m_LimitAll",
        "u_AuthUIS", "u_AuthUIF", "com.example.app", "com.apple.token", "", "http",
    ]

    mutating func value() -> Any {
        switch Int.random(in: 0..<14, using: &random) {
        case 0, 1: return Self.knownValues.randomElement(using: &random)!
        case 2: return String((0..<Int.random(in: 0..<12, using: &random)).map { _ in Character(UnicodeScalar(UInt8.random(in: 32...126, using: &random))) })
        case 3: return Data((0..<Int.random(in: 0..<40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        case 4: return Bool.random(using: &random)
        case 5: return Int.random(in: Int.min...Int.max, using: &random)
        case 6: return [-1, 0, 1, 2, 80, Int(Int32.max)].randomElement(using: &random)!
        case 7: return Double.random(in: -1e300...1e300, using: &random)
        case 8: return Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...1e9, using: &random))
        case 9: return NSNull()
        case 10: return [1, "two", Data([3])] as [Any]
        case 11: return ["nested": "dictionary"] as [String: Any]
        case 12: return SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [.userPresence], nil) as Any
        default:
            let classes = ["genp", "inet", "keys", "cert", "zzzz"]
            return Data(classes.randomElement(using: &random)!.utf8) + Data((0..<Int.random(in: 0..<20, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
    }

    mutating func dictionary() -> NSDictionary {
        let result = NSMutableDictionary()
        if Int.random(in: 0..<5, using: &random) > 0 {
            result["class"] = ["genp", "inet", "keys", "cert"].randomElement(using: &random)!
        }
        for _ in 0..<Int.random(in: 0..<8, using: &random) {
            let key: AnyHashable
            switch Int.random(in: 0..<10, using: &random) {
            case 0: key = NSNumber(value: Int.random(in: 0..<100, using: &random))
            case 1: key = Data([1, 2])
            default: key = Self.knownKeys.randomElement(using: &random)!
            }
            result[key] = value()
        }
        return result
    }
}

struct FuzzTests {
    @Test func randomQueriesNeverCrashAndOnlyReturnDocumentedStatuses() {
        TemporaryKeychain.with { _ in
            let seed = UInt64.random(in: 0...UInt64.max)
            var fuzzer = QueryFuzzer(random: SeededRandom(state: seed))
            let deadline = Date().addingTimeInterval(Double(StressLevel.pick(fast: 3, stress: 60)))
            var calls = 0
            var seen: [OSStatus: Int] = [:]
            while Date() < deadline {
                let query = fuzzer.dictionary()
                let status: OSStatus
                switch calls % 4 {
                case 0:
                    var result: CFTypeRef?
                    status = SecItemAdd(query, &result)
                case 1:
                    var result: CFTypeRef?
                    status = SecItemCopyMatching(query, &result)
                case 2: status = SecItemUpdate(query, fuzzer.dictionary())
                default: status = SecItemDelete(query)
                }
                seen[status, default: 0] += 1
                #expect(documentedStatuses.contains(status), "seed \(seed), call \(calls): status \(status) for a random query")
                calls += 1
            }
            #expect(calls > 100)
            #expect(seen.count > 3, "the fuzzer reached several outcomes: \(seen)")
        }
    }

    @Test func randomAndMutatedItemBytesNeverCrashTheDecoder() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededRandom(state: seed)
        let valid = ItemCodec.encode(
            attributes: ["acct": .string("alice"), "svce": .data(Data([1, 2, 3])), "port": .number(443),
                         "cdat": .date(12345.5), "accc": .accessControl(protection: "ak", flags: 1)],
            secret: SecretData(Data("secret".utf8)))
        let validBytes = valid.withUnsafeBytes { [UInt8]($0) }
        let iterations = StressLevel.pick(fast: 20_000, stress: 500_000)
        var decoded = 0
        for iteration in 0..<iterations {
            var bytes: [UInt8]
            if iteration % 2 == 0 {
                bytes = (0..<Int.random(in: 0..<64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                if !bytes.isEmpty && Bool.random(using: &random) { bytes[0] = 1 }
            } else {
                bytes = validBytes
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let index = Int.random(in: 0..<bytes.count, using: &random)
                    bytes[index] = UInt8.random(in: 0...255, using: &random)
                }
                if Bool.random(using: &random) { bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random))) }
            }
            let buffer = SecretBuffer(count: bytes.count)
            buffer.withUnsafeMutableBytes { out in bytes.withUnsafeBytes { if $0.count > 0 { out.copyMemory(from: $0) } } }
            do {
                _ = try ItemCodec.decode(buffer)
                decoded += 1
            } catch let failure as KeychainFailure {
                #expect(failure.status == errSecDecode, "seed \(seed): \(failure)")
            } catch {
                Issue.record("seed \(seed): unexpected error \(error)")
            }
        }
        #expect(decoded > 0, "some mutations still decode (and would then fail authentication)")
    }
}
