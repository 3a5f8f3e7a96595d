#if !canImport(Security)
import CFoundationDictionary
import Foundation

/// Turns a SecItem dictionary into an ``ItemQuery`` with Apple's rules (reference §1.7,
/// §2.4): 4-character keys are attributes of the item class, `m_` match, `r_` return,
/// `u_` use and `v_` value keys, and anything else is errSecParam. Values are coerced per
/// attribute kind. Keys are processed in a fixed order (class first, then sorted), so the
/// error reported for a dictionary with several problems is always the same one.
enum QueryParser {
    /// A dictionary's entries with string keys: its values as Foundation lists them, and
    /// its keys sorted, each with the position of its value.
    struct QueryEntries {
        /// The dictionary's values, in Foundation's order (entries with a key that is not a
        /// string included).
        let values: [Any]
        /// The string keys, sorted, each with the position of its value in ``values``.
        let keys: [(key: String, index: Int)]

        /// Whether the dictionary has `key`.
        func contains(_ key: String) -> Bool {
            keys.contains { $0.key == key }
        }

        /// The value for `key`, if the dictionary has it.
        func value(for key: String) -> Any? {
            guard let entry = keys.first(where: { $0.key == key }) else { return nil }
            return values[entry.index]
        }
    }

    /// Parses `dictionary` for `operation`.
    /// - Throws: ``KeychainFailure`` with errSecParam, errSecNoSuchAttr or errSecNoSuchClass.
    static func parse(_ dictionary: NSDictionary, for operation: Operation, reader: EntryReader = .onePass) throws -> ItemQuery {
        try parse(try stringKeyedEntries(dictionary, reader: reader), for: operation)
    }

    /// Parses entries already read by ``stringKeyedEntries(_:)``.
    static func parse(_ entries: QueryEntries, for operation: Operation) throws -> ItemQuery {
        var query = ItemQuery()

        var classValue: Any?
        var referenceValue: Any?
        for entry in entries.keys {
            if entry.key == "class" {
                classValue = entries.values[entry.index]
            } else if entry.key == "v_PersistentRef" {
                referenceValue = entries.values[entry.index]
            }
        }
        if let classValue {
            guard let name = string(classValue) else {
                throw KeychainFailure.param("kSecClass must be one of the kSecClass… string constants.")
            }
            guard let itemClass = ItemClass(rawValue: name) else {
                throw KeychainFailure(
                    errSecNoSuchClass, "'\(name)' is not a keychain item class.",
                    recovery: "Use kSecClassGenericPassword, kSecClassInternetPassword, kSecClassKey or kSecClassCertificate.")
            }
            query.itemClass = itemClass
        }
        if let referenceValue {
            guard let data = bytes(referenceValue) else {
                throw KeychainFailure.param("kSecValuePersistentRef must be Data.")
            }
            let parsed = try PersistentReference(data)
            query.persistentReference = parsed
            if query.itemClass == nil { query.itemClass = parsed.itemClass }
        }
        guard let itemClass = query.itemClass else {
            throw KeychainFailure.param("The dictionary has no kSecClass.")
        }

        query.attributes = AttributeTable(minimumCapacity: entries.keys.count)
        for entry in entries.keys where entry.key != "class" && entry.key != "v_PersistentRef" {
            try apply(key: entry.key, value: entries.values[entry.index], itemClass: itemClass, to: &query, operation: operation)
        }
        return query
    }

    /// Parses the `attributesToUpdate` of SecItemUpdate: `v_Data` is the new secret,
    /// `musr` is ignored, and every other key must be an attribute of the class
    /// (errSecNoSuchAttr otherwise, even for kSecClass or return keys, as on iOS).
    static func parseChanges(_ dictionary: NSDictionary, itemClass: ItemClass) throws -> ItemQuery {
        var changes = ItemQuery()
        changes.itemClass = itemClass
        let entries = try stringKeyedEntries(dictionary)
        for (key, index) in entries.keys {
            let value = entries.values[index]
            switch key {
            case "v_Data":
                guard let secret = secret(value) else {
                    throw KeychainFailure.param("kSecValueData must be Data (a String is not accepted; encode it as UTF-8).")
                }
                changes.valueData = secret
            case "musr", "nleg":
                continue
            default:
                guard key.utf16.count == 4 else {
                    throw KeychainFailure(
                        errSecNoSuchAttr, "\(ConstantNames.key(key)) cannot be changed by SecItemUpdate: only attributes and kSecValueData can.",
                        recovery: "Move search, return and use keys into the query dictionary.")
                }
                try applyAttribute(key, value: value, itemClass: itemClass, to: &changes, operation: .update)
            }
        }
        return changes
    }

    // MARK: Keys

    /// The dictionary's entries with string keys, sorted by key (so that errors are
    /// deterministic), after the checks every operation shares.
    static func stringKeyedEntries(_ dictionary: NSDictionary, reader: EntryReader = .onePass) throws -> QueryEntries {
        let read = readEntries(dictionary, reader: reader)
        if read.entries.contains("clip") { throw clipRefused }
        if let problem = read.problem { throw problem }
        return read.entries
    }

    /// The failure for the internal `clip` attribute, which Apple checks before anything else.
    static let clipRefused = KeychainFailure.param(
        "'clip' (kSecAttrAppClipItem) is internal to the keychain and cannot be passed in.")

    /// How ``readEntries(_:reader:)`` reads a dictionary's keys and values.
    enum EntryReader {
        /// Core Foundation's `CFDictionaryGetKeysAndValues`: one pass over the storage of a
        /// plain `NSDictionary` (what `as CFDictionary` makes of a Swift dictionary), the
        /// objects as stored. Any other class is read as ``foundation`` reads it.
        case onePass
        /// Foundation's `allKeys` and `allValues`: two arrays of `Any`, one element boxed at a
        /// time (some 1,100 instructions an entry).
        case foundation
    }

    /// The dictionary's entries with string keys, sorted by key, and the problem to report
    /// first, whatever order Foundation lists the entries in (a Swift dictionary's order
    /// changes from process to process): a key that is not a string (a number key before
    /// any other), then a null value, the first in sorted key order. Reading never stops
    /// early, so the caller can apply Apple's order of checks.
    static func readEntries(
        _ dictionary: NSDictionary, reader: EntryReader = .onePass
    ) -> (entries: QueryEntries, problem: KeychainFailure?) {
        if reader == .onePass, type(of: dictionary) == NSDictionary.self {
            // An immutable NSDictionary: its count cannot change between the two calls.
            let object = Unmanaged.passUnretained(dictionary).toOpaque()
            let count = keysmith_cf_dictionary_count(object)
            guard count > 0 else { return (QueryEntries(values: [], keys: []), nil) }
            return withUnsafeTemporaryAllocation(of: UnsafeRawPointer?.self, capacity: 2 * count) { buffer in
                let base = buffer.baseAddress!
                base.initialize(repeating: nil, count: 2 * count)
                keysmith_cf_dictionary_keys_and_values(object, base, base + count)
                var values: [Any] = []
                values.reserveCapacity(count)
                for index in 0..<count {
                    guard let value = base[count + index] else { break }
                    values.append(erased(Unmanaged<AnyObject>.fromOpaque(value).takeUnretainedValue()))
                }
                guard values.count == count else {
                    return (QueryEntries(values: [], keys: []), KeychainFailure.param("The dictionary changed while it was being read."))
                }
                return classify(count: count, values: values, keyName: { index in
                    guard let pointer = base[index] else { return nil }
                    return name(ofKey: Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue())
                }, keyIsNumber: { index in
                    base[index].map { erased(Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue()) is NSNumber } ?? false
                })
            }
        }
        // allKeys and allValues list the storage in the same order and leave the values as
        // Foundation objects: iterating (or getObjects) would look every key up again and
        // bridge every value, an NSData byte by byte.
        let keys = dictionary.allKeys
        let values = dictionary.allValues
        guard keys.count == values.count else {
            return (QueryEntries(values: [], keys: []), KeychainFailure.param("The dictionary changed while it was being read."))
        }
        return classify(count: keys.count, values: values, keyName: { string(keys[$0]) }, keyIsNumber: { keys[$0] is NSNumber })
    }

    /// A key object's name: an `NSString` read directly (a key of a Swift dictionary bridged
    /// with `as CFDictionary` is one), any other object as ``string(_:)`` reads it; `nil`
    /// when the key is not a string.
    private static func name(ofKey object: AnyObject) -> String? {
        if ObjectIdentifier(type(of: object)) == ObjectIdentifier(NSString.self) {
            return unsafeDowncast(object, to: NSString.self) as String
        }
        return string(erased(object))
    }

    /// `object` as an `Any` whose static type is `NSObject` when it is one, as Foundation's
    /// `allKeys` and `allValues` hand objects out. An object put in an `Any` as `AnyObject`
    /// (or as `NSString`) makes every later cast of it (`as AnyObject`, `as? String`) take
    /// the runtime's slow bridging path, about 3,000 instructions against about 480.
    private static func erased(_ object: AnyObject) -> Any {
        guard type(of: object) is NSObject.Type else { return object }
        return unsafeDowncast(object, to: NSObject.self) as Any
    }

    /// The entries of `count` keys, sorted, and the problem to report first (see
    /// ``readEntries(_:reader:)``): `keyName(i)` is the name of the key of `values[i]`, `nil`
    /// when that key is not a string, and `keyIsNumber(i)` says whether such a key is a number.
    private static func classify(
        count: Int, values: [Any], keyName: (Int) -> String?, keyIsNumber: (Int) -> Bool
    ) -> (entries: QueryEntries, problem: KeychainFailure?) {
        var entries: [(key: String, index: Int)] = []
        entries.reserveCapacity(count)
        var numberKey = false
        var otherKey = false
        var hasNull = false
        for index in 0..<count {
            guard let name = keyName(index) else {
                if keyIsNumber(index) { numberKey = true } else { otherKey = true }
                continue
            }
            if !hasNull, isNull(values[index]) { hasNull = true }
            entries.append((name, index))
        }
        entries.sort { $0.key < $1.key }
        let result = QueryEntries(values: values, keys: entries)
        if numberKey {
            return (result, KeychainFailure(errSecNoSuchAttr, "A dictionary key is a number; keychain keys are kSec… strings."))
        }
        if otherKey {
            return (result, KeychainFailure.param("A dictionary key is not a string; keychain keys are kSec… strings."))
        }
        if hasNull, let null = entries.first(where: { isNull(values[$0.index]) }) {
            return (result, KeychainFailure.param("The value for \(ConstantNames.key(null.key)) is null."))
        }
        return (result, nil)
    }

    private static func apply(
        key: String, value: Any, itemClass: ItemClass, to query: inout ItemQuery, operation: Operation
    ) throws {
        if key.utf16.count == 4 {
            if key == "nleg" { return }  // kSecUseDataProtectionKeychain: always the case here
            try applyAttribute(key, value: value, itemClass: itemClass, to: &query, operation: operation)
            return
        }
        guard key.utf8.count > 1, let first = key.first else {
            throw KeychainFailure.param("\(ConstantNames.key(key)) is not a keychain dictionary key.")
        }
        switch first {
        case "c":
            throw KeychainFailure.param("\(ConstantNames.key(key)) is not a keychain dictionary key (did you mean kSecClass?).")
        case "m":
            // macOS's SecItemDelete accepts kSecMatchLimitAll (every match, which delete does
            // anyway), and portable code sends it from its macOS branch; iOS would refuse it.
            if operation == .delete, key == "m_Limit", string(value) == "m_LimitAll" { return }
            try applyMatch(key, value: value, to: &query)
        case "r": try applyReturn(key, value: value, to: &query)
        case "u": try applyUse(key, value: value, to: &query)
        case "v": try applyValue(key, value: value, to: &query)
        case "f": return
        default:
            throw KeychainFailure.param("\(ConstantNames.key(key)) is not a keychain dictionary key.")
        }
    }

    private static func applyMatch(_ key: String, value: Any, to query: inout ItemQuery) throws {
        query.hasMatchKeys = true
        switch key {
        case "m_Limit":
            if let name = string(value) {
                switch name {
                case "m_LimitOne": query.limit = .one
                case "m_LimitAll": query.limit = .many(nil)
                default: throw KeychainFailure.param("kSecMatchLimit must be kSecMatchLimitOne, kSecMatchLimitAll or a number.")
                }
            } else if value is NSNumber, !isBoolean(value) {
                guard let wide = integer(value), let count = Int(exactly: wide) else {
                    throw KeychainFailure.param("kSecMatchLimit must be a whole number.")
                }
                if count == 1 {
                    query.limit = .one
                } else if count < 0 {
                    throw KeychainFailure.param("kSecMatchLimit cannot be negative.")
                } else {
                    query.limit = .many(count)
                }
            } else {
                throw KeychainFailure.param("kSecMatchLimit must be kSecMatchLimitOne, kSecMatchLimitAll or a number.")
            }
        case "m_HostOrSubdomainOfHost":
            guard let host = string(value) else {
                throw KeychainFailure.param("kSecMatchHostOrSubdomainOfHost must be a string.")
            }
            query.hostOrSubdomain = host
        case "m_Issuers", "m_Policy", "m_ValidOnDate", "m_TrustedOnly", "m_EmailAddressIfPresent":
            query.certificateMatchKeys.append(key)
        default:
            // Apple accepts (and ignores) every other m_ key, kSecMatchCaseInsensitive
            // included: matching is always exact.
            return
        }
    }

    private static func applyReturn(_ key: String, value: Any, to query: inout ItemQuery) throws {
        guard isBoolean(value), let flag = boolean(value) else {
            throw KeychainFailure.param("The value of \(ConstantNames.key(key)) must be a boolean (true or kCFBooleanTrue).")
        }
        switch key {
        case "r_Data": query.returnData = flag
        case "r_Attributes": query.returnAttributes = flag
        case "r_Ref": query.returnRef = flag
        case "r_PersistentRef": query.returnPersistentRef = flag
        default: throw KeychainFailure.param("\(ConstantNames.key(key)) is not a kSecReturn… key.")
        }
    }

    private static func applyUse(_ key: String, value: Any, to query: inout ItemQuery) throws {
        switch key {
        case "u_ItemList": query.hasItemList = true
        case "u_OpPrompt":
            query.operationPrompt = string(value)
        case "u_CallerName":
            return
        case "u_AuthUI":
            // As Apple's client does: only Skip reaches the keychain (and is checked there);
            // Fail changes how authentication is handled; every other value is dropped.
            switch string(value) {
            case "u_AuthUIS"?: query.authenticationUI = .skip
            case "u_AuthUIF"?: query.authenticationUI = .fail
            default: query.authenticationUI = .allow
            }
        case "u_NoAuthUI":
            if boolean(value) == true { query.authenticationUI = .fail }
        case "u_AuthCtx":
            query.hasAuthenticationContext = true
            query.authenticationSession = (value as? any KeychainAuthenticationContext)?.authenticationSession
        case "u_CredRef": query.hasCredentialReference = true
        case "u_UserIndependentKeychain", "u_Tomb", "u_SystemKeychain", "u_SystemKeychainAlways",
            "u_SyncBubbleKeychain", "u_TokenRawItems", "u_CertWithIssuers":
            return
        default:
            throw KeychainFailure.param("\(ConstantNames.key(key)) is not a kSecUse… key here.")
        }
        if query.hasAuthenticationContext && query.hasCredentialReference {
            throw KeychainFailure.param("kSecUseAuthenticationContext and kSecUseCredentialReference cannot be used together.")
        }
    }

    private static func applyValue(_ key: String, value: Any, to query: inout ItemQuery) throws {
        switch key {
        case "v_Data":
            guard let secret = secret(value) else {
                throw KeychainFailure.param("kSecValueData must be Data (a String is not accepted; encode it as UTF-8).")
            }
            query.valueData = secret
        case "v_Ref":
            // Apple narrows the query to the referenced key or certificate; there are no such
            // objects here, so ignoring the key would widen the query to the whole class.
            throw KeychainFailure.param(
                "kSecValueRef is not supported here: keys and certificates are stored as data (kSecValueData) and attributes.")
        default: throw KeychainFailure.param("\(ConstantNames.key(key)) is not a kSecValue… key.")
        }
    }

    // MARK: Attributes and coercion (reference §2.4)

    private static func applyAttribute(
        _ tag: String, value: Any, itemClass: ItemClass, to query: inout ItemQuery, operation: Operation
    ) throws {
        guard let spec = spec(tag, itemClass: itemClass) else {
            throw KeychainFailure.noSuchAttribute(tag, itemClass: itemClass.rawValue)
        }
        switch spec.kind {
        case .synchronizable:
            if let name = string(value), name == "syna" {
                query.sync = .any
            } else if let flag = coerceBoolean(value) {
                query.sync = .only(flag)
            } else {
                throw KeychainFailure.param("kSecAttrSynchronizable must be a boolean or kSecAttrSynchronizableAny.")
            }
        case .accessControl:
            guard let control = value as? SecAccessControl else {
                throw KeychainFailure.param("kSecAttrAccessControl must be made with SecAccessControlCreateWithFlags.")
            }
            query.accessControl = control
        default:
            // Under the schema's spelling of the tag: tables compare tags byte for byte.
            query.attributes[spec.tag] = try coerce(value, kind: spec.kind, tag: tag)
        }
    }

    /// The attribute `tag` of `itemClass`; identities accept the attributes of both
    /// certificates and keys.
    static func spec(_ tag: String, itemClass: ItemClass) -> AttributeSpec? {
        if let schema = itemClass.schema { return schema.attributes[tag] }
        return ClassSchema.certificate.attributes[tag] ?? ClassSchema.key.attributes[tag]
    }

    private static func coerceBoolean(_ value: Any) -> Bool? {
        if isBoolean(value) { return boolean(value) }
        if let number = number(value) { return number.int64Value != 0 }
        if let string = QueryParser.string(value), let number = Int64(string) { return number != 0 }
        return nil
    }

    static func coerce(_ value: Any, kind: AttributeKind, tag: String) throws -> AttributeValue {
        switch kind {
        case .blob:
            if let string = QueryParser.string(value) { return .string(string) }
            if let data = bytes(value) { return .data(data) }
            if let number = integer(value) { return .number(number) }
            throw KeychainFailure.param("The value of \(ConstantNames.key(tag)) must be a string, Data or a whole number that fits in 64 bits.")
        case .number:
            if let number = integer(value) { return .number(number) }
            if let string = QueryParser.string(value) {
                if let number = Int64(string), String(number) == string { return .number(number) }
                return .string(string)
            }
            throw KeychainFailure.param("The value of \(ConstantNames.key(tag)) must be a whole number that fits in 64 bits (or a string constant).")
        case .date:
            if let date = value as? Date { return .date(date.timeIntervalSinceReferenceDate) }
            throw KeychainFailure.param("The value of \(ConstantNames.key(tag)) must be a Date.")
        case .string:
            if let string = QueryParser.string(value) { return .string(string) }
            if let data = bytes(value), let string = String(data: data, encoding: .utf8) { return .string(string) }
            throw KeychainFailure.param("The value of \(ConstantNames.key(tag)) must be a string.")
        case .data:
            if let data = bytes(value) { return .data(data) }
            if let string = QueryParser.string(value) { return .data(Data(string.utf8)) }
            if let number = integer(value) { return .data(AttributeValue.number(number).matchBytes) }
            throw KeychainFailure.param("The value of \(ConstantNames.key(tag)) must be Data.")
        case .accessibility:
            guard let name = string(value), ProtectionClass(rawValue: name) != nil else {
                throw KeychainFailure.param(
                    "kSecAttrAccessible must be one of the kSecAttrAccessible… constants (for example kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly).")
            }
            return .string(name)
        case .synchronizable, .accessControl:
            throw KeychainFailure.param("\(ConstantNames.key(tag)) cannot be coerced here.")
        }
    }

    // MARK: Value types
    //
    // Foundation on Linux hands a dictionary's keys and values out as Foundation objects
    // (NSString, NSNumber, NSData, NSNull). A Swift cast of one (`as? String`, `is NSNull`,
    // `as? Bool`) goes through the runtime's bridging search, some 1,600 instructions each;
    // comparing the object's exact class costs a few dozen. Each function below answers
    // exactly what the cast it stands for answers: for the exact classes listed in
    // ``FoundationClass`` it reads the object directly, and for any other type (a subclass,
    // a Swift value in a custom dictionary) it performs the cast itself.

    /// The exact Foundation classes whose values are read without a runtime cast.
    enum FoundationClass {
        case string, number, boolean, data, null
        /// Another type: the caller falls back to Swift's cast.
        case other

        init(of value: Any) {
            let type = ObjectIdentifier(Swift.type(of: value))
            if type == ObjectIdentifier(NSString.self) {
                self = .string
            } else if type == QueryParser.booleanClassIdentifier {
                self = .boolean
            } else if type == ObjectIdentifier(NSNumber.self) {
                self = .number
            } else if type == ObjectIdentifier(NSData.self) {
                self = .data
            } else if type == ObjectIdentifier(NSNull.self) {
                self = .null
            } else {
                self = .other
            }
        }
    }

    /// `value as? String`.
    static func string(_ value: Any) -> String? {
        switch FoundationClass(of: value) {
        case .string: return unsafeDowncast(value as AnyObject, to: NSString.self) as String
        case .number, .boolean, .data, .null: return nil
        case .other: return value as? String
        }
    }

    /// `value is NSNull`.
    static func isNull(_ value: Any) -> Bool {
        switch FoundationClass(of: value) {
        case .null: return true
        case .string, .number, .boolean, .data: return false
        case .other: return value is NSNull
        }
    }

    /// `value as? NSNumber`.
    private static func number(_ value: Any) -> NSNumber? {
        switch FoundationClass(of: value) {
        case .number, .boolean: return unsafeDowncast(value as AnyObject, to: NSNumber.self)
        case .string, .data, .null: return nil
        case .other: return value as? NSNumber
        }
    }

    /// The class Foundation uses for boolean numbers (`kCFBooleanTrue`, a bridged `Bool`).
    private static let booleanClass: AnyClass = type(of: NSNumber(value: true) as AnyObject)
    private static let booleanClassIdentifier = ObjectIdentifier(booleanClass)

    /// Whether `value` is a boolean (`true`, `kCFBooleanTrue`), not just any number.
    static func isBoolean(_ value: Any) -> Bool {
        switch FoundationClass(of: value) {
        case .boolean: return true
        case .string, .number, .data, .null: return false
        case .other:
            if type(of: value) == Bool.self { return true }
            guard value is NSNumber else { return false }
            return type(of: value as AnyObject) == booleanClass
        }
    }

    /// The truth value of a boolean or number.
    static func boolean(_ value: Any) -> Bool? {
        switch FoundationClass(of: value) {
        // A Foundation boolean is kCFBooleanTrue or kCFBooleanFalse, which `as? Bool` maps
        // to the same truth value. A plain number keeps the cast: `as? Bool` accepts only
        // 0 and 1, and other numbers fall through to `boolValue`.
        case .boolean: return unsafeDowncast(value as AnyObject, to: NSNumber.self).boolValue
        case .string, .data, .null: return nil
        case .number, .other:
            if let flag = value as? Bool { return flag }
            return (value as? NSNumber)?.boolValue
        }
    }

    /// The bytes of a `Data`/`NSData` value, copied in one go (Foundation on Linux bridges
    /// an `NSData` to `Data` byte by byte).
    /// `kSecValueData`: the caller's bytes, copied once, straight into a buffer that is
    /// zeroed when released (no intermediate `Data` that would be freed with the secret in it).
    static func secret(_ value: Any) -> SecretData? {
        switch FoundationClass(of: value) {
        case .data:
            let data = unsafeDowncast(value as AnyObject, to: NSData.self)
            guard data.length > 0 else { return SecretData(copying: UnsafeRawBufferPointer(start: nil, count: 0)) }
            return SecretData(copying: UnsafeRawBufferPointer(start: data.bytes, count: data.length))
        case .string, .number, .boolean, .null: return nil
        case .other: break
        }
        if let secret = value as? SecretData { return secret }  // immutable: shared, not copied
        if let contiguous = value as? (any ContiguousBytes & NSData) {
            return contiguous.withUnsafeBytes { SecretData(copying: $0) }
        }
        if let data = value as? NSData {
            guard data.length > 0 else { return SecretData(copying: UnsafeRawBufferPointer(start: nil, count: 0)) }
            return SecretData(copying: UnsafeRawBufferPointer(start: data.bytes, count: data.length))
        }
        if let data = value as? Data { return data.withUnsafeBytes { SecretData(copying: $0) } }
        return nil
    }

    static func bytes(_ value: Any) -> Data? {
        switch FoundationClass(of: value) {
        case .data:
            let data = unsafeDowncast(value as AnyObject, to: NSData.self)
            return data.length == 0 ? Data() : Data(bytes: data.bytes, count: data.length)
        case .string, .number, .boolean, .null: return nil
        case .other: break
        }
        if let contiguous = value as? (any ContiguousBytes & NSData) {
            return contiguous.withUnsafeBytes { Data($0) }
        }
        if let data = value as? NSData {
            return data.length == 0 ? Data() : Data(bytes: data.bytes, count: data.length)
        }
        return value as? Data
    }

    /// An integer from a number or boolean; `nil` for a non-integral number or one that
    /// does not fit in 64 bits (never wrapped or saturated).
    private static func integer(_ value: Any) -> Int64? {
        if isBoolean(value), let flag = boolean(value) { return flag ? 1 : 0 }
        guard let number = number(value) else { return nil }
        switch String(cString: number.objCType) {
        case "f", "d":
            let double = number.doubleValue
            guard double.isFinite, double.rounded() == double else { return nil }
            return Int64(exactly: double)
        case "Q", "L", "I", "S", "C":
            return Int64(exactly: number.uint64Value)
        default:
            return number.int64Value
        }
    }
}
#endif
