import Foundation

/// Every byte string etcd holds under a prefix, decoded as far as it goes: `etcdctl get -w json`
/// gives each value in base64; a value that is a JSON envelope gives its strings, and each
/// string that is base64 gives its bytes too. A plaintext stored in any of these forms (as
/// it is, as base64 inside the envelope) shows up in one of them.
enum EtcdStoredBytes {
    static func all(_ etcdctlJSON: String) throws -> [Data] {
        let root = try JSONSerialization.jsonObject(with: Data(etcdctlJSON.utf8)) as? [String: Any]
        let pairs = root?["kvs"] as? [[String: Any]] ?? []
        var found: [Data] = []
        for pair in pairs {
            guard let encoded = pair["value"] as? String, let value = Data(base64Encoded: encoded) else { continue }
            found.append(value)
            if let envelope = try? JSONSerialization.jsonObject(with: value) { collect(envelope, into: &found) }
        }
        return found
    }

    /// How many values `etcdctl get -w json` output holds.
    static func valueCount(_ etcdctlJSON: String) throws -> Int {
        let root = try JSONSerialization.jsonObject(with: Data(etcdctlJSON.utf8)) as? [String: Any]
        return (root?["kvs"] as? [[String: Any]])?.count ?? 0
    }

    private static func collect(_ object: Any, into found: inout [Data]) {
        switch object {
        case let text as String:
            found.append(Data(text.utf8))
            if let decoded = Data(base64Encoded: text) { found.append(decoded) }
        case let array as [Any]:
            for element in array { collect(element, into: &found) }
        case let dictionary as [String: Any]:
            for value in dictionary.values { collect(value, into: &found) }
        default:
            break
        }
    }
}
