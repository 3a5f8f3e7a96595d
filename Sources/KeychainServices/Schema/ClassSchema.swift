#if !canImport(Security)
import Foundation

/// How an attribute's value is coerced and stored (Apple's `SecDbAttrKind`).
enum AttributeKind: Sendable {
    /// Keeps the caller's type: string, data or number (acct, svce, labl, …).
    case blob
    /// A number; booleans become 0/1, strings that round-trip as integers become numbers,
    /// other strings stay strings (kSecAttrProtocol values are 4-char strings).
    case number
    /// A date (`Date`/`NSDate` only).
    case date
    /// A string; data is decoded as UTF-8 (agrp, vwht, tkid).
    case string
    /// Bytes; strings become their UTF-8, numbers 4 bytes (issr, slnr, klbl, subj, …).
    case data
    /// The protection class (pdmn): one of Apple's accessibility values.
    case accessibility
    /// The synchronizable flag (a boolean; `kSecAttrSynchronizableAny` in queries).
    case synchronizable
    /// A ``SecAccessControl`` (accc): drives pdmn and the ACL, never a search filter.
    case accessControl
}

/// One attribute of an item class.
struct AttributeSpec: Sendable {
    let tag: String
    let kind: AttributeKind
    /// Part of the class's uniqueness constraint.
    let isPrimaryKey: Bool
    /// Stored on add when the caller gives none (primary keys and a few others).
    let defaultValue: AttributeValue?
    /// Returned only together with the item's data (the inet extra fields).
    let returnedOnlyWithData: Bool

    init(
        _ tag: String, _ kind: AttributeKind, primaryKey: Bool = false, default defaultValue: AttributeValue? = nil,
        onlyWithData: Bool = false
    ) {
        self.tag = tag
        self.kind = kind
        isPrimaryKey = primaryKey
        self.defaultValue = defaultValue
        returnedOnlyWithData = onlyWithData
    }
}

/// The attributes, primary key and defaults of one item class (after Apple's
/// `SecItemSchema.c`, current schema).
struct ClassSchema: Sendable {
    let itemClass: ItemClass
    /// Every attribute of the class, by tag.
    let attributes: [String: AttributeSpec]
    /// The primary-key attributes in a fixed order (uniqueness constraint).
    let primaryKey: [String]
    /// The two attributes lookups use most (genp: svce and acct); equality on them is
    /// answered by keyed-hash index columns.
    let indexedNames: (first: String, second: String)

    private init(_ itemClass: ItemClass, _ specs: [AttributeSpec], indexed: (String, String)) {
        self.itemClass = itemClass
        let all = specs + ClassSchema.common
        var byTag: [String: AttributeSpec] = [:]
        for spec in all { byTag[spec.tag] = spec }
        attributes = byTag
        primaryKey = all.filter(\.isPrimaryKey).map(\.tag)
        indexedNames = indexed
    }

    static func schema(for itemClass: ItemClass) -> ClassSchema? {
        switch itemClass {
        case .genericPassword: return genericPassword
        case .internetPassword: return internetPassword
        case .certificate: return certificate
        case .key: return key
        case .identity: return nil
        }
    }

    // MARK: The classes

    private static let emptyString = AttributeValue.string("")
    private static let emptyData = AttributeValue.data(Data())
    private static let zero = AttributeValue.number(0)
    private static let dateZero = AttributeValue.date(0)

    /// Attributes every class has.
    private static let common: [AttributeSpec] = [
        AttributeSpec("agrp", .string, primaryKey: true),
        AttributeSpec("pdmn", .accessibility),
        AttributeSpec("sync", .synchronizable, primaryKey: true, default: zero),
        AttributeSpec("tomb", .number, default: zero),
        AttributeSpec("musr", .data, primaryKey: true, default: emptyData),
        AttributeSpec("vwht", .string, primaryKey: true),
        AttributeSpec("tkid", .string, primaryKey: true),
        AttributeSpec("accc", .accessControl),
        AttributeSpec("cdat", .date),
        AttributeSpec("mdat", .date),
        AttributeSpec("labl", .blob),
        AttributeSpec("alis", .blob),
    ]

    private static let passwordCommon: [AttributeSpec] = [
        AttributeSpec("desc", .blob), AttributeSpec("icmt", .blob), AttributeSpec("crtr", .number),
        AttributeSpec("type", .number), AttributeSpec("scrp", .number), AttributeSpec("invi", .number),
        AttributeSpec("nega", .number), AttributeSpec("cusi", .number), AttributeSpec("prot", .blob),
        AttributeSpec("acct", .blob, primaryKey: true, default: emptyString),
    ]

    static let genericPassword = ClassSchema(
        .genericPassword,
        passwordCommon + [
            AttributeSpec("svce", .blob, primaryKey: true, default: emptyString),
            AttributeSpec("gena", .blob),
        ],
        indexed: ("svce", "acct"))

    static let internetPassword = ClassSchema(
        .internetPassword,
        passwordCommon + [
            AttributeSpec("sdmn", .blob, primaryKey: true, default: emptyString),
            AttributeSpec("srvr", .blob, primaryKey: true, default: emptyString),
            AttributeSpec("ptcl", .number, primaryKey: true, default: zero),
            AttributeSpec("atyp", .blob, primaryKey: true, default: emptyString),
            AttributeSpec("port", .number, primaryKey: true, default: zero),
            AttributeSpec("path", .blob, primaryKey: true, default: emptyString),
        ] + ["binn", "bini", "bin0", "bin1", "bin2", "bin3"].map { AttributeSpec($0, .data, onlyWithData: true) },
        indexed: ("srvr", "acct"))

    static let certificate = ClassSchema(
        .certificate,
        [
            AttributeSpec("ctyp", .number, primaryKey: true, default: zero),
            AttributeSpec("cenc", .number),
            AttributeSpec("subj", .data),
            AttributeSpec("issr", .data, primaryKey: true, default: emptyData),
            AttributeSpec("slnr", .data, primaryKey: true, default: emptyData),
            AttributeSpec("skid", .data),
            AttributeSpec("pkhh", .data),
        ],
        indexed: ("issr", "slnr"))

    static let key = ClassSchema(
        .key,
        [
            AttributeSpec("kcls", .number, primaryKey: true, default: zero),
            AttributeSpec("perm", .number), AttributeSpec("priv", .number), AttributeSpec("modi", .number),
            AttributeSpec("klbl", .data, primaryKey: true, default: emptyData),
            AttributeSpec("atag", .blob, primaryKey: true, default: emptyString),
            AttributeSpec("crtr", .number, primaryKey: true, default: zero),
            AttributeSpec("type", .number, primaryKey: true, default: zero),
            AttributeSpec("bsiz", .number, primaryKey: true, default: zero),
            AttributeSpec("esiz", .number, primaryKey: true, default: zero),
            AttributeSpec("sdat", .date, primaryKey: true, default: dateZero),
            AttributeSpec("edat", .date, primaryKey: true, default: dateZero),
        ]
            + ["sens", "asen", "extr", "next", "encr", "decr", "drve", "sign", "vrfy", "snrc", "vyrc", "wrap", "unwp"]
            .map { AttributeSpec($0, .number) },
        indexed: ("atag", "klbl"))
}
#endif
