#if !canImport(Security)
import Foundation

/// Shapes what SecItemAdd and SecItemCopyMatching hand back (reference §3.6).
enum ResultBuilder {
    /// The result for one item, or `nil` where Apple returns NULL (no return keys; data
    /// asked for but the item has none; a reference asked for a password).
    static func result(for record: ItemRecord, query: ItemQuery) -> AnyObject? {
        let asked = [query.returnData, query.returnAttributes, query.returnRef, query.returnPersistentRef]
            .filter { $0 }.count
        if asked == 0 { return nil }
        if asked == 1 {
            if query.returnData { return record.secret }
            if query.returnAttributes { return attributeDictionary(record, includeDataOnly: false) }
            if query.returnPersistentRef { return SecretData(persistentReference(record)) }
            return nil  // kSecReturnRef: no SecKey/SecCertificate objects here; nil for passwords as on iOS
        }
        // Several return keys: one dictionary. As on iOS, asking for the data brings the
        // attributes along.
        let dictionary: NSMutableDictionary
        if query.returnAttributes || query.returnRef || query.returnData {
            dictionary = attributeDictionary(record, includeDataOnly: query.returnData)
        } else {
            dictionary = NSMutableDictionary()
        }
        if query.returnData, let secret = record.secret {
            dictionary["v_Data"] = secret
        }
        if query.returnPersistentRef {
            dictionary["v_PersistentRef"] = SecretData(persistentReference(record))
        }
        if query.returnRef {
            dictionary["class"] = NSString(string: record.itemClass.rawValue)
        }
        return dictionary
    }

    /// The 20-byte persistent reference of an item.
    static func persistentReference(_ record: ItemRecord) -> Data {
        PersistentReference.encode(itemClass: record.itemClass, reference: record.reference)
    }

    /// Every stored attribute; the inet extra fields only with the data.
    static func attributeDictionary(_ record: ItemRecord, includeDataOnly: Bool) -> NSMutableDictionary {
        let dictionary = NSMutableDictionary(capacity: record.attributes.count)
        let schema = record.itemClass.schema
        for (tag, value) in record.attributes {
            if !includeDataOnly, schema?.attributes[tag]?.returnedOnlyWithData == true { continue }
            dictionary[tag] = bridged(value)
        }
        return dictionary
    }

    private static func bridged(_ value: AttributeValue) -> AnyObject {
        switch value {
        case .string(let string): return NSString(string: string)
        case .data(let data): return SecretData(data)
        case .number(let number): return NSNumber(value: number)
        case .date(let seconds): return NSDate(timeIntervalSinceReferenceDate: seconds)
        case .accessControl(let protection, let flags):
            return SecAccessControl(protection: protection, flags: SecAccessControlCreateFlags(rawValue: flags))
        }
    }
}
#endif
