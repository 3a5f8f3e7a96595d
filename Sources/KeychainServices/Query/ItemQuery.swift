#if !canImport(Security)
import Foundation

/// The four SecItem operations; parsing rules differ slightly between them.
enum Operation: Sendable {
    case add, copyMatching, update, delete
}

/// How many items a search returns (`kSecMatchLimit`).
enum MatchLimit: Equatable, Sendable {
    /// One item, returned as a single object (the default).
    case one
    /// Up to `n` items (unbounded when `nil`), returned as an array even for one hit.
    case many(Int?)
}

/// The synchronizable filter of a query (`kSecAttrSynchronizable`).
enum SyncFilter: Equatable, Sendable {
    case only(Bool)
    /// `kSecAttrSynchronizableAny`: no filter.
    case any
}

/// `kSecUseAuthenticationUI`.
enum AuthenticationUI: Sendable {
    case allow, fail, skip
}

/// A persistent reference: the item class and the item's stored reference.
struct PersistentReference: Equatable, Sendable {
    let itemClass: ItemClass
    enum Locator: Equatable, Sendable {
        /// The 16 random bytes stored with the item (20-byte form: class + UUID).
        case uuid(Data)
        /// A SQLite rowid (Apple's classic 12-byte form: class + big-endian rowid).
        case rowID(Int64)
    }
    let locator: Locator

    /// The 20-byte form handed out by this keychain: 4-byte class + 16-byte reference.
    static func encode(itemClass: ItemClass, reference: Data) -> Data {
        Data(itemClass.rawValue.utf8) + reference
    }

    /// Parses Apple's two public forms.
    /// - Throws: errSecParam for anything else.
    init(_ data: Data) throws {
        guard data.count == 20 || data.count == 12,
            let name = String(data: data.prefix(4), encoding: .ascii),
            let itemClass = ItemClass(rawValue: name)
        else {
            throw KeychainFailure.param("kSecValuePersistentRef is not a persistent reference made by this keychain.")
        }
        self.itemClass = itemClass
        if data.count == 20 {
            locator = .uuid(Data(data.suffix(16)))
        } else {
            var rowID: Int64 = 0
            for byte in data.suffix(8) { rowID = (rowID << 8) | Int64(byte) }
            locator = .rowID(rowID)
        }
    }
}

/// A query or attribute dictionary, parsed and coerced (Apple's `Query`).
struct ItemQuery {
    var itemClass: ItemClass?
    /// 4-character attributes (coerced), except `sync` and `accc`, which have their own
    /// fields.
    var attributes = AttributeTable()
    var sync: SyncFilter?
    var accessControl: SecAccessControl?

    var limit: MatchLimit = .one
    /// Whether any `m_*` key was present.
    var hasMatchKeys = false
    var hostOrSubdomain: String?
    /// Certificate-evaluation keys (issuers, policy, trust, validity) that need PKI.
    var certificateMatchKeys: [String] = []

    var returnData = false
    var returnAttributes = false
    var returnRef = false
    var returnPersistentRef = false
    var hasReturnKeys: Bool { returnData || returnAttributes || returnRef || returnPersistentRef }

    /// `kSecValueData`, in a zeroing buffer.
    var valueData: SecretData?
    var persistentReference: PersistentReference?

    var authenticationUI: AuthenticationUI = .allow
    var hasItemList = false
    var hasAuthenticationContext = false
    /// The session of the `kSecUseAuthenticationContext` object (an `LAContext`), when it
    /// is one the keychain knows.
    var authenticationSession: AuthenticationSession?
    var hasCredentialReference = false
    var operationPrompt: String?

    /// The explicit access group, if the query names one.
    var accessGroup: String? {
        if case .string(let group)? = attributes[.accessGroup] { return group }
        return nil
    }
}
#endif
