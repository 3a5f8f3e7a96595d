// Seeded random input: random query dictionaries into the four SecItem calls, and random or
// mutated bytes into the item decoder. Nothing may crash, every status must be one the
// engine documents, and every call must do what its status says: an add that succeeds
// leaves one new item that a query finds, a search changes nothing, and a call that fails
// changes nothing (the keychain's items are compared before and after). Each test runs a
// fixed seed (the same inputs every run) and a random one; both seeds are printed. (libFuzzer would need a -sanitize=fuzzer
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

/// Every item of a keychain, by persistent reference: class, attributes and data. An item whose
/// access control needs the user (a random add may make one) has no data in the snapshot: its
/// attributes are read without a prompt, its data only under kSecUseAuthenticationUISkip, which
/// leaves it out (this process has no one to ask).
func keychainSnapshot() -> [Data: NSDictionary] {
    var snapshot: [Data: NSDictionary] = [:]
    for itemClass in [kSecClassGenericPassword, kSecClassInternetPassword, kSecClassKey, kSecClassCertificate] {
        var attributes: CFTypeRef?
        let everyItem: [String: Any] = [
            kSecClass as String: itemClass, kSecMatchLimit as String: kSecMatchLimitAll,
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny, kSecReturnAttributes as String: true,
            kSecReturnPersistentRef as String: true,
        ]
        let status = SecItemCopyMatching(everyItem as CFDictionary, &attributes)
        #expect(status == errSecSuccess || status == errSecItemNotFound, "snapshot of \(itemClass): \(status)")
        var withData = everyItem
        withData[kSecReturnData as String] = true
        withData[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUISkip
        var data: CFTypeRef?
        let dataStatus = SecItemCopyMatching(withData as CFDictionary, &data)
        #expect(dataStatus == errSecSuccess || dataStatus == errSecItemNotFound, "snapshot data of \(itemClass): \(dataStatus)")
        var dataByReference: [Data: Any] = [:]
        for item in (data as? [[String: Any]]) ?? [] {
            if let reference = item[kSecValuePersistentRef as String] as? Data {
                dataByReference[reference] = item[kSecValueData as String]
            }
        }
        for item in (attributes as? [[String: Any]]) ?? [] {
            guard let reference = item[kSecValuePersistentRef as String] as? Data else {
                Issue.record("an item without a persistent reference")
                continue
            }
            var entry = item
            entry[kSecClass as String] = itemClass
            entry[kSecValueData as String] = dataByReference[reference]
            snapshot[reference] = entry as NSDictionary
        }
    }
    return snapshot
}

/// Whether two snapshots hold the same items with the same attributes and data.
func sameItems(_ first: [Data: NSDictionary], _ second: [Data: NSDictionary]) -> Bool {
    first.count == second.count && first.allSatisfy { second[$0.key]?.isEqual($0.value) == true }
}

struct FuzzTests {
    /// The seed every run starts with, so a failure it finds is found again on every run.
    static let fixedSeed: UInt64 = 0x5EED_0000_0000_0016

    @Test func randomQueriesReturnDocumentedStatusesAndDoWhatTheStatusSays() {
        // KEYSMITH_FUZZ_SEED replays the seed a failure printed.
        let randomSeed = ProcessInfo.processInfo.environment["KEYSMITH_FUZZ_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        print("FuzzTests query seeds: fixed \(Self.fixedSeed), random \(randomSeed)")
        // The fixed seed runs a fixed number of calls (reproducible); the random one for a time.
        fuzzQueries(seed: Self.fixedSeed, calls: StressLevel.pick(fast: 600, stress: 5_000), seconds: nil)
        fuzzQueries(seed: randomSeed, calls: nil, seconds: Double(StressLevel.pick(fast: 3, stress: 60)))
    }

    private func fuzzQueries(seed: UInt64, calls limit: Int?, seconds: Double?) {
        TemporaryKeychain.with { _ in
            var fuzzer = QueryFuzzer(random: SeededRandom(state: seed))
            let deadline = seconds.map { Date().addingTimeInterval($0) }
            var calls = 0
            var seen: [OSStatus: Int] = [:]
            var successfulAdds = 0
            var before = keychainSnapshot()
            while limit.map({ calls < $0 }) ?? (Date() < deadline!) {
                let query = fuzzer.dictionary()
                let status: OSStatus
                let call = ["add", "copy", "update", "delete"][calls % 4]
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
                let context = "seed \(seed), call \(calls) (\(call)): status \(status)"
                #expect(documentedStatuses.contains(status), "\(context) for a random query")
                let after = keychainSnapshot()
                if status != errSecSuccess || call == "copy" {
                    #expect(sameItems(before, after), "\(context), yet the keychain changed")
                } else if call == "add" {
                    successfulAdds += 1
                    let added = after.filter { before[$0.key] == nil }
                    #expect(after.count == before.count + 1 && added.count == 1, "\(context): \(added.count) new items")
                    #expect(before.allSatisfy { after[$0.key]?.isEqual($0.value) == true }, "\(context): an add changed another item")
                    if let (reference, item) = added.first {
                        let givenClass = (query["class"] as? String) ?? ""
                        #expect(item[kSecClass as String] as? String == givenClass, "\(context): stored as another class")
                        // The new item is found again by its reference.
                        var found: CFTypeRef?
                        let lookup: [String: Any] = [kSecValuePersistentRef as String: reference, kSecReturnAttributes as String: true]
                        #expect(SecItemCopyMatching(lookup as CFDictionary, &found) == errSecSuccess, "\(context): not found again")
                    }
                } else if call == "delete" {
                    #expect(after.count < before.count, "\(context): nothing was deleted")
                    #expect(after.allSatisfy { before[$0.key]?.isEqual($0.value) == true }, "\(context): a delete changed an item")
                }
                before = after
                calls += 1
            }
            #expect(calls > 100)
            #expect(seen.count > 3, "seed \(seed): the fuzzer reached several outcomes: \(seen)")
            #expect(successfulAdds > 0, "seed \(seed): no random add succeeded, so no postcondition was checked")
        }
    }

    @Test func randomAndMutatedItemBytesNeverCrashTheDecoder() {
        let randomSeed = UInt64.random(in: 0...UInt64.max)
        print("FuzzTests decoder seeds: fixed \(Self.fixedSeed), random \(randomSeed)")
        for seed in [Self.fixedSeed, randomSeed] { fuzzDecoder(seed: seed) }
    }

    private func fuzzDecoder(seed: UInt64) {
        var random = SeededRandom(state: seed)
        let valid = ItemCodec.encode(
            attributes: ["acct": .string("alice"), "svce": .data(Data([1, 2, 3])), "port": .number(443),
                         "cdat": .date(12345.5), "accc": .accessControl(protection: "ak", flags: 1)],
            secret: SecretData(Data("secret".utf8)))
        let validBytes = valid.withUnsafeBytes { [UInt8]($0) }
        let iterations = StressLevel.pick(fast: 10_000, stress: 250_000)
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
        #expect(decoded > 0, "seed \(seed): some mutations still decode (and would then fail authentication)")
    }
}
