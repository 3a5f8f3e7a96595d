import Foundation
import KeychainServices
import Testing

extension Conformance {
/// Reference §2.2 (per-class attribute lists): attributes of the class are accepted, 4-character
/// keys that are not → errSecNoSuchAttr.
struct SchemaTests {
    /// A value of the right storage kind for each attribute used below.
    private func sampleValue(_ tag: String) -> Any {
        switch tag {
        case "cdat", "mdat", "sdat", "edat": return Date(timeIntervalSinceReferenceDate: 1000)
        case "crtr", "type", "invi", "nega", "ptcl", "port", "ctyp", "cenc", "kcls", "bsiz", "esiz",
            "perm", "priv", "modi", "sens", "asen", "extr", "next", "encr", "decr", "drve", "sign", "vrfy",
            "snrc", "vyrc", "wrap", "unwp":
            return 1
        case "subj", "issr", "slnr", "skid", "pkhh", "klbl", "gena": return Data("v-\(tag)".utf8)
        case "sync": return true
        case "pdmn": return kSecAttrAccessibleAfterFirstUnlock
        case "agrp": return "com.example.shared"
        default: return "v-\(tag)"
        }
    }

    private func check(
        _ itemClass: CFString, accepted: [String], rejected: [String], base: (Int) -> Query,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (index, tag) in accepted.enumerated() {
            let query = base(index).with([tag: sampleValue(tag)])
            #expect(secAdd(query) == errSecSuccess, "\(itemClass): '\(tag)' is an attribute of the class", sourceLocation: sourceLocation)
        }
        for (index, tag) in rejected.enumerated() {
            let query = base(1000 + index).with([tag: sampleValue(tag)])
            #expect(secAdd(query) == errSecNoSuchAttr, "\(itemClass): '\(tag)' is not an attribute of the class", sourceLocation: sourceLocation)
            #expect(secCopy(query).status == errSecNoSuchAttr, "\(itemClass): '\(tag)' in a query", sourceLocation: sourceLocation)
        }
    }

    @Test func genericPasswordAttributes() {
        TemporaryKeychain.with { _ in
            check(
                kSecClassGenericPassword,
                accepted: ["cdat", "mdat", "desc", "icmt", "crtr", "type", "labl", "alis", "invi", "nega", "acct", "svce", "gena", "agrp", "pdmn", "sync", "vwht"],
                rejected: ["srvr", "sdmn", "ptcl", "atyp", "port", "path", "subj", "issr", "slnr", "skid", "pkhh", "ctyp", "cenc",
                           "kcls", "klbl", "atag", "bsiz", "esiz", "sdat", "edat", "sens", "encr", "perm", "volm", "addr", "afps"],
                base: { genp("svc", "acct-\($0)") })
        }
    }

    @Test func internetPasswordAttributes() {
        TemporaryKeychain.with { _ in
            check(
                kSecClassInternetPassword,
                accepted: ["cdat", "mdat", "desc", "icmt", "crtr", "type", "labl", "alis", "invi", "nega", "acct", "sdmn", "srvr",
                           "ptcl", "atyp", "port", "path", "agrp", "pdmn", "sync", "vwht"],
                rejected: ["svce", "gena", "volm", "addr", "afps", "kcls", "issr", "atag", "subj"],
                base: { inet("host-\($0).example", "acct-\($0)") })
        }
    }

    @Test func certificateAttributes() {
        TemporaryKeychain.with { _ in
            check(
                kSecClassCertificate,
                accepted: ["cdat", "mdat", "ctyp", "cenc", "labl", "alis", "subj", "issr", "slnr", "skid", "pkhh", "agrp", "pdmn", "sync", "vwht"],
                rejected: ["acct", "svce", "desc", "icmt", "crtr", "type", "srvr", "atag", "kcls", "invi", "gena"],
                base: { certItem(serial: "serial-\($0)") })
        }
    }

    @Test func keyAttributes() {
        TemporaryKeychain.with { _ in
            check(
                kSecClassKey,
                accepted: ["cdat", "mdat", "kcls", "labl", "alis", "perm", "priv", "modi", "klbl", "atag", "crtr", "type", "bsiz", "esiz",
                           "sdat", "edat", "sens", "asen", "extr", "next", "encr", "decr", "drve", "sign", "vrfy", "snrc", "vyrc",
                           "wrap", "unwp", "agrp", "pdmn", "sync", "vwht"],
                rejected: ["acct", "svce", "desc", "icmt", "srvr", "subj", "issr", "invi", "nega", "gena", "ctyp"],
                base: { keyItem(tag: "tag-\($0)") })
        }
    }

    // §2.1: vwht (kSecAttrSyncViewHint) is part of every class's primary key.
    @Test func syncViewHintIsPartOfTheKey() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secAdd(genp().with(kSecAttrSyncViewHint, "view-a")) == errSecSuccess)
            #expect(secAdd(genp().with(kSecAttrSyncViewHint, "view-b")) == errSecSuccess)
            #expect(secAdd(genp().with(kSecAttrSyncViewHint, "view-a")) == errSecDuplicateItem)
            #expect(matchCount(genp()) == 3)
            #expect(matchCount(genp().with(kSecAttrSyncViewHint, "view-a")) == 1)
        }
    }

    // §2.4: Data attributes accept a CFNumber as its 4 host-order bytes.
    @Test func dataAttributeAcceptsNumberAsInt32Bytes() {
        TemporaryKeychain.with { _ in
            var value = Int32(77)
            let bytes = withUnsafeBytes(of: &value) { Data($0) }
            #expect(secAdd(item(kSecClassCertificate, [kSecAttrSerialNumber: 77])) == errSecSuccess)
            #expect(secCopy(item(kSecClassCertificate, [kSecAttrSerialNumber: bytes])).status == errSecSuccess)
            #expect(secAdd(item(kSecClassCertificate, [kSecAttrSerialNumber: bytes])) == errSecDuplicateItem)
        }
    }

    // §3.3 [C]: the tombstone attribute is matchable; ordinary items have tomb = 0.
    @Test func tombstoneFilter() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secCopy(genp().with(["tomb": 0])).status == errSecSuccess)
            #expect(secCopy(genp().with(["tomb": 1])).status == errSecItemNotFound)
        }
    }
}
}
