import Foundation
@testable import KeychainServices
import Testing

// The query parser reads the exact Foundation classes a dictionary hands out (NSString,
// NSNumber, the boolean class, NSData, NSNull) without Swift's bridging casts, and falls
// back to the casts for every other type. These tests hold the two to the same answers:
// value by value against the casts themselves, and query by query, parsing the same
// dictionary once with exact Foundation classes (read directly) and once with subclasses
// (NSMutableString, NSMutableData: read through the casts).

/// Values as they come out of a bridged dictionary, and values of other types.
private func sampleValues() -> [Any] {
    let bridged: [String: Any] = [
        "string": "com.example", "empty": "", "true": true, "false": false, "int": 5, "zero": 0, "one": 1,
        "negative": -1, "fraction": 0.5, "double": 2.0, "data": Data([1, 2, 3]), "emptyData": Data(),
        "date": Date(timeIntervalSinceReferenceDate: 10), "array": ["a"], "dictionary": ["a": 1],
    ]
    var values: [Any] = (bridged as NSDictionary).allValues
    values += [
        NSString(string: "genp"), NSMutableString(string: "acct"), "swift string", "12", "-3", "syna",
        NSNumber(value: true), NSNumber(value: false), kCFBooleanTrue as Any, kCFBooleanFalse as Any,
        NSNumber(value: 7), NSNumber(value: UInt64.max), NSNumber(value: Double.nan), NSNumber(value: 1.0),
        true, false, 3, 2.5, Int64.min,
        NSData(bytes: [9, 8], length: 2), NSData(), NSMutableData(bytes: [7], length: 1), Data([4]),
        SecretData(copying: UnsafeRawBufferPointer(start: nil, count: 0)),
        NSNull(), NSDate(), Date(), NSArray(array: [1]), NSObject(), [1, 2] as [Int],
    ]
    return values
}

/// The answers of the casts the parser used before it read exact classes directly.
private enum CastAnswers {
    static let booleanClass: AnyClass = type(of: NSNumber(value: true) as AnyObject)

    static func isBoolean(_ value: Any) -> Bool {
        if type(of: value) == Bool.self { return true }
        guard value is NSNumber else { return false }
        return type(of: value as AnyObject) == booleanClass
    }

    static func boolean(_ value: Any) -> Bool? {
        if let flag = value as? Bool { return flag }
        return (value as? NSNumber)?.boolValue
    }

    static func bytes(_ value: Any) -> Data? {
        if let contiguous = value as? (any ContiguousBytes & NSData) {
            return contiguous.withUnsafeBytes { Data($0) }
        }
        if let data = value as? NSData {
            return data.length == 0 ? Data() : Data(bytes: data.bytes, count: data.length)
        }
        return value as? Data
    }
}

@Suite("Query parser type checks")
struct QueryParserTypeCheckTests {
    @Test("Reading a value's class directly answers as Swift's casts do, for every kind of value")
    func helpersAgreeWithCasts() {
        for value in sampleValues() {
            let label = "\(type(of: value)): \(value)"
            #expect(QueryParser.string(value) == value as? String, "\(label)")
            #expect(QueryParser.isNull(value) == (value is NSNull), "\(label)")
            #expect(QueryParser.isBoolean(value) == CastAnswers.isBoolean(value), "\(label)")
            #expect(QueryParser.boolean(value) == CastAnswers.boolean(value), "\(label)")
            #expect(QueryParser.bytes(value) == CastAnswers.bytes(value), "\(label)")
            let secret = QueryParser.secret(value).map { $0.withUnsafeBytes { Data($0) } }
            #expect(secret == CastAnswers.bytes(value), "\(label)")
        }
    }

    @Test("A query parses the same with exact Foundation classes and with their subclasses", arguments: [
        KeychainServices.Operation.add, .copyMatching, .update, .delete,
    ])
    func parsingAgreesAcrossClasses(operation: KeychainServices.Operation) {
        for query in sampleQueries() {
            let direct = outcome(parsing: foundationDictionary(query, subclasses: false), for: operation)
            let cast = outcome(parsing: foundationDictionary(query, subclasses: true), for: operation)
            #expect(direct == cast, "\(query)")
        }
    }

    @Test("SecItemUpdate's changes parse the same with exact Foundation classes and with their subclasses")
    func changesAgreeAcrossClasses() {
        let changes: [[String: Any]] = [
            ["acct": "bob"], ["v_Data": Data("new".utf8)], ["v_Data": "new"], ["acct": NSNull()],
            ["gena": Data([1]), "musr": 1, "nleg": true], ["sync": "syna"], ["sync": 1], ["pdmn": "ak"],
            ["class": "genp"], ["r_Data": true], ["m_Limit": "m_LimitAll"], ["zzzz": 1], ["clip": true],
            ["acct": 5, "svce": Data("s".utf8), "labl": "label"], ["type": "12"], ["cdat": Date()],
        ]
        for change in changes {
            var outcomes: [String] = []
            for subclasses in [false, true] {
                do {
                    let parsed = try QueryParser.parseChanges(
                        foundationDictionary(change, subclasses: subclasses), itemClass: .genericPassword)
                    let attributes = parsed.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                    let secret = parsed.valueData.map { $0.withUnsafeBytes { Data($0) } }
                    outcomes.append("\(attributes) sync=\(String(describing: parsed.sync)) secret=\(String(describing: secret))")
                } catch let failure as KeychainFailure {
                    outcomes.append("error \(failure.status): \(failure.reason)")
                } catch {
                    outcomes.append("unexpected \(error)")
                }
            }
            #expect(outcomes[0] == outcomes[1], "\(change)")
        }
    }

    @Test("The first problem reported does not depend on the order the dictionary lists its keys")
    func firstProblemIsDeterministic() {
        let problems: [String: Any] = [
            "class": "genp", "zzzz": "unknown attribute", "acct": NSNull(), "r_Data": "yes", "m_Limit": -1,
        ]
        let expected = outcome(parsing: foundationDictionary(problems, subclasses: false), for: .copyMatching)
        #expect(expected.hasPrefix("error"))
        for _ in 0..<5 {
            let shuffled = NSMutableDictionary()
            for key in problems.keys.shuffled() { shuffled[NSString(string: key)] = problems[key]! as AnyObject }
            #expect(outcome(parsing: shuffled, for: .copyMatching) == expected)
        }
    }

    // MARK: Inputs and outcomes

    /// Well-formed and malformed queries, by raw key.
    private func sampleQueries() -> [[String: Any]] {
        let base: [String: Any] = ["class": "genp", "svce": "com.example", "acct": "alice"]
        func with(_ extra: [String: Any]) -> [String: Any] { base.merging(extra) { $1 } }
        return [
            base,
            with(["r_Data": true]),
            with(["r_Data": true, "r_Attributes": false, "m_Limit": "m_LimitAll"]),
            with(["r_Data": 1]), with(["r_Data": "yes"]), with(["r_Ref": kCFBooleanTrue as Any]),
            with(["m_Limit": 5]), with(["m_Limit": 1]), with(["m_Limit": -1]), with(["m_Limit": 1.5]),
            with(["m_Limit": true]), with(["m_Limit": "m_LimitOne"]), with(["m_Limit": "many"]),
            with(["sync": "syna"]), with(["sync": true]), with(["sync": 0]), with(["sync": "1"]), with(["sync": "x"]),
            with(["v_Data": Data("secret".utf8)]), with(["v_Data": "secret"]), with(["v_Data": Data()]),
            with(["agrp": "com.example.group"]), with(["agrp": Data("com.example.group".utf8)]), with(["agrp": 3]),
            with(["acct": Data("alice".utf8)]), with(["acct": 42]), with(["acct": NSNull()]),
            with(["gena": "generic"]), with(["gena": 7]), with(["gena": Data([0, 1])]),
            with(["type": 12]), with(["type": "abcd"]), with(["type": true]), with(["crtr": "1234"]),
            with(["pdmn": "ak"]), with(["pdmn": "nonsense"]), with(["pdmn": 1]),
            with(["cdat": Date(timeIntervalSinceReferenceDate: 1)]), with(["cdat": "today"]),
            with(["u_AuthUI": "u_AuthUIS"]), with(["u_AuthUI": "u_AuthUIF"]), with(["u_NoAuthUI": true]),
            with(["u_AuthUI": "u_AuthUIS", "u_NoAuthUI": true]), with(["u_OpPrompt": "Unlock"]), with(["u_Unknown": 1]),
            with(["m_HostOrSubdomainOfHost": "example.com"]), with(["m_HostOrSubdomainOfHost": 1]),
            with(["m_CaseInsensitive": true]), with(["nleg": true]), with(["f_Anything": 1]),
            with(["srvr": "example.com"]), with(["zzzz": "x"]), with(["clip": true]), with(["x": 1]),
            with(["class": "inet", "srvr": "example.com", "port": 443, "ptcl": "htps"]),
            with(["class": 1]), with(["class": "nope"]), with(["class": NSNull()]),
            ["svce": "no class"], ["v_PersistentRef": Data("genp".utf8) + Data(count: 16)],
            with(["v_PersistentRef": Data([1, 2, 3])]), with(["v_PersistentRef": "genp"]),
            with(["acct": NSNull(), "zzzz": 1]), with(["r_Data": "yes", "m_Limit": -1, "svce": 5]),
        ]
    }

    /// `query` as a Foundation dictionary. With `subclasses`, strings are NSMutableString
    /// and data NSMutableData (keys included), which the parser reads through Swift's casts.
    private func foundationDictionary(_ query: [String: Any], subclasses: Bool) -> NSDictionary {
        guard subclasses else { return query as NSDictionary }
        let dictionary = NSMutableDictionary()
        for (key, value) in query {
            let object: AnyObject
            switch value {
            case let string as String: object = NSMutableString(string: string)
            case let data as Data: object = NSMutableData(data: data)
            default: object = value as AnyObject
            }
            dictionary[NSMutableString(string: key)] = object
        }
        return dictionary
    }

    /// What parsing gives: the failure's status and reason, or the parsed query's fields.
    private func outcome(parsing dictionary: NSDictionary, for operation: KeychainServices.Operation) -> String {
        do {
            let query = try QueryParser.parse(dictionary, for: operation)
            let attributes = query.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            let secret = query.valueData.map { $0.withUnsafeBytes { Data($0) } }
            return """
                class=\(String(describing: query.itemClass)) attributes=\(attributes) sync=\(String(describing: query.sync)) \
                limit=\(query.limit) match=\(query.hasMatchKeys) host=\(String(describing: query.hostOrSubdomain)) \
                certificate=\(query.certificateMatchKeys) return=\(query.returnData),\(query.returnAttributes),\
                \(query.returnRef),\(query.returnPersistentRef) secret=\(String(describing: secret)) \
                reference=\(String(describing: query.persistentReference)) ui=\(query.authenticationUI) \
                prompt=\(String(describing: query.operationPrompt)) list=\(query.hasItemList)
                """
        } catch let failure as KeychainFailure {
            return "error \(failure.status): \(failure.reason)"
        } catch {
            return "unexpected \(error)"
        }
    }
}
