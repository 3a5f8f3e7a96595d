#if !canImport(Security)
import Foundation

/// The `kSec…` constant names of the raw strings Keychain Services uses, so that a failure
/// names what the reader wrote (`kSecAttrServer`, `kSecClassGenericPassword`), not the
/// string behind it (`srvr`, `genp`). The one place where raw strings become names.
enum ConstantNames {
    /// The name of a dictionary key (`srvr` → `kSecAttrServer`), in the context of an item
    /// class where two keys share a string (`type` is kSecAttrKeyType for keys, kSecAttrType
    /// otherwise); a string that is no constant is quoted (`'bogu'`).
    static func key(_ raw: String, itemClass: String? = nil) -> String {
        if itemClass == "keys", let name = keyClassKeys[raw] { return name }
        if let name = keys[raw] { return name }
        return "'\(raw)'"
    }

    /// The name of an item class (`genp` → `kSecClassGenericPassword`); others are quoted.
    static func itemClass(_ raw: String) -> String {
        classes[raw] ?? "'\(raw)'"
    }

    /// The name of a protection class (`ak` → `kSecAttrAccessibleWhenUnlocked`); others are quoted.
    static func protection(_ raw: String) -> String {
        protections[raw] ?? "'\(raw)'"
    }

    /// What makes an item of `itemClass` unique, for a duplicate-item failure: for example
    /// "kSecClassGenericPassword items are unique by kSecAttrAccount, kSecAttrService,
    /// kSecAttrAccessGroup and kSecAttrSynchronizable, and kSecAttrSyncViewHint and
    /// kSecAttrTokenID when set". The internal multi-user attribute is left out.
    static func uniqueness(of itemClass: String, primaryKey: [String]) -> String {
        let rarelySet: Set<String> = ["vwht", "tkid"]
        let common = primaryKey.filter { $0 != "musr" && !rarelySet.contains($0) }
        let rare = primaryKey.filter { rarelySet.contains($0) }
        var text = "\(Self.itemClass(itemClass)) items are unique by \(list(common.map { key($0, itemClass: itemClass) }))"
        if !rare.isEmpty { text += ", and \(list(rare.map { key($0, itemClass: itemClass) })) when set" }
        return text
    }

    /// "a", "a and b", "a, b and c".
    private static func list(_ names: [String]) -> String {
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1]
    }

    /// Keys whose string means another constant in the key class.
    private static let keyClassKeys: [String: String] = [
        "crtr": "kSecAttrKeyCreator",
        "type": "kSecAttrKeyType",
    ]

    private static let keys: [String: String] = [
        "accc": "kSecAttrAccessControl",
        "acct": "kSecAttrAccount",
        "acls": "kSecAttrAccess",
        "addr": "kSecAttrAddress",
        "afps": "kSecAttrAFPServerSignature",
        "agrp": "kSecAttrAccessGroup",
        "alis": "kSecAttrAlias",
        "asen": "kSecAttrWasAlwaysSensitive",
        "atag": "kSecAttrApplicationTag",
        "atyp": "kSecAttrAuthenticationType",
        "bsiz": "kSecAttrKeySizeInBits",
        "cdat": "kSecAttrCreationDate",
        "cenc": "kSecAttrCertificateEncoding",
        "class": "kSecClass",
        "crtr": "kSecAttrCreator",
        "ctyp": "kSecAttrCertificateType",
        "decr": "kSecAttrCanDecrypt",
        "desc": "kSecAttrDescription",
        "drve": "kSecAttrCanDerive",
        "edat": "kSecAttrEndDate",
        "encr": "kSecAttrCanEncrypt",
        "esiz": "kSecAttrEffectiveKeySize",
        "extr": "kSecAttrIsExtractable",
        "gena": "kSecAttrGeneric",
        "icmt": "kSecAttrComment",
        "invi": "kSecAttrIsInvisible",
        "issr": "kSecAttrIssuer",
        "kcls": "kSecAttrKeyClass",
        "klbl": "kSecAttrApplicationLabel",
        "labl": "kSecAttrLabel",
        "m_CaseInsensitive": "kSecMatchCaseInsensitive",
        "m_DiacriticInsensitive": "kSecMatchDiacriticInsensitive",
        "m_EmailAddressIfPresent": "kSecMatchEmailAddressIfPresent",
        "m_HostOrSubdomainOfHost": "kSecMatchHostOrSubdomainOfHost",
        "m_Issuers": "kSecMatchIssuers",
        "m_ItemList": "kSecMatchItemList",
        "m_Limit": "kSecMatchLimit",
        "m_LimitAll": "kSecMatchLimitAll",
        "m_LimitOne": "kSecMatchLimitOne",
        "m_Policy": "kSecMatchPolicy",
        "m_SearchList": "kSecMatchSearchList",
        "m_SubjectContains": "kSecMatchSubjectContains",
        "m_SubjectEndsWith": "kSecMatchSubjectEndsWith",
        "m_SubjectStartsWith": "kSecMatchSubjectStartsWith",
        "m_SubjectWholeString": "kSecMatchSubjectWholeString",
        "m_TrustedOnly": "kSecMatchTrustedOnly",
        "m_ValidOnDate": "kSecMatchValidOnDate",
        "m_WidthInsensitive": "kSecMatchWidthInsensitive",
        "mdat": "kSecAttrModificationDate",
        "modi": "kSecAttrIsModifiable",
        "nega": "kSecAttrIsNegative",
        "next": "kSecAttrWasNeverExtractable",
        "nleg": "kSecUseDataProtectionKeychain",
        "path": "kSecAttrPath",
        "pdmn": "kSecAttrAccessible",
        "perm": "kSecAttrIsPermanent",
        "persistref": "kSecAttrPersistentReference",
        "pkhh": "kSecAttrPublicKeyHash",
        "port": "kSecAttrPort",
        "prf": "kSecAttrPRF",
        "priv": "kSecAttrIsPrivate",
        "ptcl": "kSecAttrProtocol",
        "r_Attributes": "kSecReturnAttributes",
        "r_Data": "kSecReturnData",
        "r_PersistentRef": "kSecReturnPersistentRef",
        "r_Ref": "kSecReturnRef",
        "rounds": "kSecAttrRounds",
        "salt": "kSecAttrSalt",
        "sdat": "kSecAttrStartDate",
        "sdmn": "kSecAttrSecurityDomain",
        "sens": "kSecAttrIsSensitive",
        "sign": "kSecAttrCanSign",
        "skid": "kSecAttrSubjectKeyID",
        "slnr": "kSecAttrSerialNumber",
        "snrc": "kSecAttrCanSignRecover",
        "srvr": "kSecAttrServer",
        "subj": "kSecAttrSubject",
        "svce": "kSecAttrService",
        "sync": "kSecAttrSynchronizable",
        "tkid": "kSecAttrTokenID",
        "type": "kSecAttrType",
        "u_AuthCtx": "kSecUseAuthenticationContext",
        "u_AuthUI": "kSecUseAuthenticationUI",
        "u_AuthUIA": "kSecUseAuthenticationUIAllow",
        "u_AuthUIF": "kSecUseAuthenticationUIFail",
        "u_AuthUIS": "kSecUseAuthenticationUISkip",
        "u_ItemList": "kSecUseItemList",
        "u_Keychain": "kSecUseKeychain",
        "u_NoAuthUI": "kSecUseNoAuthenticationUI",
        "u_OpPrompt": "kSecUseOperationPrompt",
        "u_UserIndependentKeychain": "kSecUseUserIndependentKeychain",
        "unwp": "kSecAttrCanUnwrap",
        "v_Data": "kSecValueData",
        "v_PersistentRef": "kSecValuePersistentRef",
        "v_Ref": "kSecValueRef",
        "volm": "kSecAttrVolume",
        "vrfy": "kSecAttrCanVerify",
        "vwht": "kSecAttrSyncViewHint",
        "vyrc": "kSecAttrCanVerifyRecover",
        "wrap": "kSecAttrCanWrap",
        // Apple's private attributes (SecItemPriv.h), which appear in diagnostics.
        "musr": "kSecAttrMultiUser",
        "scrp": "kSecAttrScriptCode",
        "cusi": "kSecAttrHasCustomIcon",
        "prot": "kSecAttrProtected",
        "binn": "kSecDataInetExtraNotes",
        "bini": "kSecDataInetExtraHistory",
        "bin0": "kSecDataInetExtraClientDefined0",
        "bin1": "kSecDataInetExtraClientDefined1",
        "bin2": "kSecDataInetExtraClientDefined2",
        "bin3": "kSecDataInetExtraClientDefined3",
        "tomb": "kSecAttrTombstone",
        "clip": "kSecAttrAppClipItem",
    ]

    private static let classes: [String: String] = [
        "cert": "kSecClassCertificate",
        "genp": "kSecClassGenericPassword",
        "idnt": "kSecClassIdentity",
        "inet": "kSecClassInternetPassword",
        "keys": "kSecClassKey",
    ]

    private static let protections: [String: String] = [
        "ak": "kSecAttrAccessibleWhenUnlocked",
        "akpu": "kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly",
        "aku": "kSecAttrAccessibleWhenUnlockedThisDeviceOnly",
        "ck": "kSecAttrAccessibleAfterFirstUnlock",
        "cku": "kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly",
        "dk": "kSecAttrAccessibleAlways",
        "dku": "kSecAttrAccessibleAlwaysThisDeviceOnly",
        "f": "kSecAttrAccessibleUntilReboot",
    ]
}
#endif
