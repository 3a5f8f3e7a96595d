import Foundation
@testable import KeychainServices
import Testing

// The query parser reads a plain NSDictionary in one pass (Core Foundation's
// CFDictionaryGetKeysAndValues) and any other dictionary through Foundation's allKeys and
// allValues. These tests hold the two readers to the same entries, the same parsed query
// and the same error, for well-formed and malformed dictionaries, and check that the error
// reported for a dictionary with several problems does not depend on the order its storage
// lists the keys in.

@Suite("Query reader equivalence")
struct QueryReaderEquivalenceTests {
    @Test("Both readers give the same sorted entries and values, and the same problem")
    func readersGiveTheSameEntries() {
        for dictionary in sampleDictionaries() {
            let onePass = QueryParser.readEntries(dictionary, reader: .onePass)
            let foundation = QueryParser.readEntries(dictionary, reader: .foundation)
            #expect(onePass.entries.keys.map(\.key) == foundation.entries.keys.map(\.key), "\(dictionary)")
            for entry in onePass.entries.keys {
                let mine = onePass.entries.values[entry.index] as AnyObject
                let theirs = foundation.entries.value(for: entry.key).map { $0 as AnyObject }
                #expect(theirs.map { $0 === mine } == true, "\(entry.key) in \(dictionary)")
            }
            #expect(describe(onePass.problem) == describe(foundation.problem), "\(dictionary)")
        }
    }

    @Test("Both readers parse to the same query or the same error", arguments: [
        KeychainServices.Operation.add, .copyMatching, .update, .delete,
    ])
    func readersParseTheSame(operation: KeychainServices.Operation) {
        for dictionary in sampleDictionaries() {
            let onePass = outcome(dictionary, operation, reader: .onePass)
            let foundation = outcome(dictionary, operation, reader: .foundation)
            #expect(onePass == foundation, "\(dictionary)")
        }
    }

    @Test("The one-pass reader is the one a bridged Swift dictionary goes through")
    func bridgedDictionariesArePlain() {
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "s"]
        #expect(type(of: query as CFDictionary) == NSDictionary.self)
    }

    @Test("With several problems, the same one is reported whatever the storage order")
    func severalProblemsAreReportedInAFixedOrder() {
        let cases: [([String: Any], [NSObject], String)] = [
            // A key that is not a string is reported before any null value.
            (["class": "genp", "acct": NSNull(), "svce": NSNull()], [NSNumber(value: 7)],
                "error \(errSecNoSuchAttr): A dictionary key is a number; keychain keys are kSec… strings."),
            (["class": "genp", "acct": NSNull()], [NSDate(timeIntervalSinceReferenceDate: 0)],
                "error \(errSecParam): A dictionary key is not a string; keychain keys are kSec… strings."),
            // A number key is reported before a key of another type.
            (["class": "genp"], [NSDate(timeIntervalSinceReferenceDate: 0), NSNumber(value: 1)],
                "error \(errSecNoSuchAttr): A dictionary key is a number; keychain keys are kSec… strings."),
            // The first null value in sorted key order.
            (["class": "genp", "svce": NSNull(), "acct": NSNull(), "labl": NSNull(), "zzzz": 1], [],
                "error \(errSecParam): The value for kSecAttrAccount is null."),
        ]
        var generator = SystemRandomNumberGenerator()
        for (entries, otherKeys, expected) in cases {
            var keys: [NSObject] = entries.keys.map { NSString(string: $0) } + otherKeys
            var values: [AnyObject] = entries.values.map { $0 as AnyObject } + otherKeys.map { _ in "value" as NSString }
            for round in 0..<24 {
                // Different insertion orders, through both readers.
                let order = Array(keys.indices).shuffled(using: &generator)
                keys = order.map { keys[$0] }
                values = order.map { values[$0] }
                let plain = NSDictionary(objects: values, forKeys: keys)
                #expect(outcome(plain, .copyMatching, reader: .onePass) == expected, "round \(round): \(plain)")
                #expect(outcome(plain, .copyMatching, reader: .foundation) == expected, "round \(round): \(plain)")
                let mutable = mutableCopy(plain)
                #expect(outcome(mutable, .copyMatching, reader: .onePass) == expected, "round \(round): \(plain)")
            }
        }
    }

    // MARK: Inputs and outcomes

    /// Well-formed and malformed dictionaries: plain NSDictionary objects as `as
    /// CFDictionary` makes them, and ones with keys of other types.
    private func sampleDictionaries() -> [NSDictionary] {
        let base: [String: Any] = ["class": "genp", "svce": "com.example", "acct": "alice"]
        func with(_ extra: [String: Any]) -> NSDictionary { base.merging(extra) { $1 } as NSDictionary }
        func withKeys(_ extra: [(NSObject, AnyObject)]) -> NSDictionary {
            let keys: [NSObject] = base.keys.map { NSString(string: $0) } + extra.map(\.0)
            let values: [AnyObject] = base.values.map { $0 as AnyObject } + extra.map(\.1)
            return NSDictionary(objects: values, forKeys: keys)
        }
        return [
            base as NSDictionary, [:] as NSDictionary,
            with(["r_Data": true]), with(["r_Data": true, "r_Attributes": true, "m_Limit": "m_LimitAll"]),
            with(["r_Data": "yes"]), with(["m_Limit": -1]), with(["m_Limit": 1.5]), with(["sync": "syna"]),
            with(["v_Data": Data("secret".utf8)]), with(["v_Data": "secret"]), with(["agrp": Data("g".utf8)]),
            with(["acct": 42]), with(["acct": NSNull()]), with(["svce": NSNull(), "acct": NSNull()]),
            with(["gena": Data([0, 1])]), with(["pdmn": "nonsense"]), with(["cdat": "today"]),
            with(["u_AuthUI": "u_AuthUIS"]), with(["u_Unknown": 1]), with(["zzzz": "x"]), with(["clip": true]),
            with(["x": 1]), with(["class": 1]), with(["class": NSNull()]), ["svce": "no class"] as NSDictionary,
            // Keys that only look like keychain keys.
            with(["ACCT": "alice"]), with(["acct ": "alice"]), with(["acct\u{0}": "alice"]), with(["svcé": "x"]),
            with(["r_data": true]), with(["Class": "genp"]),
            // Keys that are not strings, and mutable strings and data.
            withKeys([(NSNumber(value: 3), "three" as NSString)]),
            withKeys([(NSDate(timeIntervalSinceReferenceDate: 0), "date" as NSString)]),
            withKeys([(NSNumber(value: 3), NSNull()), (NSString(string: "labl"), NSNull())]),
            withKeys([(NSMutableString(string: "labl"), NSMutableString(string: "label"))]),
            withKeys([(NSString(string: "gena"), NSMutableData(data: Data([1, 2])))]),
            mutableCopy(with(["r_Data": true])),
        ]
    }

    /// The entries of `dictionary` in an NSMutableDictionary (read through Foundation).
    private func mutableCopy(_ dictionary: NSDictionary) -> NSMutableDictionary {
        let copy = NSMutableDictionary()
        for (key, value) in zip(dictionary.allKeys, dictionary.allValues) {
            copy.setObject(value, forKey: key as! NSObject)
        }
        return copy
    }

    private func describe(_ failure: KeychainFailure?) -> String {
        failure.map { "error \($0.status): \($0.reason)" } ?? "none"
    }

    /// The failure's status and reason, or the parsed query's fields.
    private func outcome(
        _ dictionary: NSDictionary, _ operation: KeychainServices.Operation, reader: QueryParser.EntryReader
    ) -> String {
        do {
            let query = try QueryParser.parse(dictionary, for: operation, reader: reader)
            let attributes = query.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            let secret = query.valueData.map { $0.withUnsafeBytes { Data($0) } }
            return """
                class=\(String(describing: query.itemClass)) attributes=\(attributes) sync=\(String(describing: query.sync)) \
                limit=\(query.limit) match=\(query.hasMatchKeys) return=\(query.returnData),\(query.returnAttributes),\
                \(query.returnRef),\(query.returnPersistentRef) secret=\(String(describing: secret)) \
                ui=\(query.authenticationUI) prompt=\(String(describing: query.operationPrompt))
                """
        } catch let failure as KeychainFailure {
            return describe(failure)
        } catch {
            return "unexpected \(error)"
        }
    }
}
