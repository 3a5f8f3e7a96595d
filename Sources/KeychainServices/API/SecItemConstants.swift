#if !canImport(Security)
import Foundation

// The public `kSec*` dictionary keys and values of Keychain Services.
//
// Each constant is a `CFString` (here an `NSString`) whose raw value is the string Apple's
// Security framework uses, so that queries built with these names, with Apple's literal
// strings, or decoded from a serialised dictionary all compare equal. The values are the
// ones listed in section 1 of `secitem-semantics.md`. Several keys share a raw value on
// purpose (for example `kSecAttrKeyType` and `kSecAttrType`), exactly as on Apple platforms.

// MARK: - Item class (kSecClass)

/// The dictionary key whose value is the item's class (one of the `kSecClass*` values).
nonisolated(unsafe) public let kSecClass: CFString = "class"
/// Item class of a generic password: a secret identified by service and account.
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
/// Item class of an internet password: a secret identified by server, protocol, port, path and account.
nonisolated(unsafe) public let kSecClassInternetPassword: CFString = "inet"
/// Item class of an X.509 certificate.
nonisolated(unsafe) public let kSecClassCertificate: CFString = "cert"
/// Item class of a cryptographic key (public, private or symmetric).
nonisolated(unsafe) public let kSecClassKey: CFString = "keys"
/// Item class of an identity: a certificate together with its matching private key.
nonisolated(unsafe) public let kSecClassIdentity: CFString = "idnt"

// MARK: - Attribute keys: common

/// When the item's secret may be read (one of the `kSecAttrAccessible*` values).
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
/// The item's access control object (protection class plus user-presence constraints).
nonisolated(unsafe) public let kSecAttrAccessControl: CFString = "accc"
/// The access group the item belongs to; items are shared only within their group. Part of the primary key.
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
/// Whether the item is synchronised through iCloud Keychain (a Boolean, or `kSecAttrSynchronizableAny` in queries). Part of the primary key.
nonisolated(unsafe) public let kSecAttrSynchronizable: CFString = "sync"
/// The date the item was created (read-only).
nonisolated(unsafe) public let kSecAttrCreationDate: CFString = "cdat"
/// The date the item was last modified (read-only).
nonisolated(unsafe) public let kSecAttrModificationDate: CFString = "mdat"
/// A user-visible string describing the kind of item (for example "Web form password").
nonisolated(unsafe) public let kSecAttrDescription: CFString = "desc"
/// A user-editable comment about the item.
nonisolated(unsafe) public let kSecAttrComment: CFString = "icmt"
/// The item's creator, a four-character code stored as a number.
nonisolated(unsafe) public let kSecAttrCreator: CFString = "crtr"
/// The item's type, a four-character code stored as a number. Part of the primary key of key items (as `kSecAttrKeyType`).
nonisolated(unsafe) public let kSecAttrType: CFString = "type"
/// The item's user-visible label. Part of the primary key of key items.
nonisolated(unsafe) public let kSecAttrLabel: CFString = "labl"
/// Whether the item is hidden from the user (a Boolean).
nonisolated(unsafe) public let kSecAttrIsInvisible: CFString = "invi"
/// Whether the item is a placeholder whose password the user declined to save (a Boolean).
nonisolated(unsafe) public let kSecAttrIsNegative: CFString = "nega"
/// The item's account name (passwords). Part of the primary key.
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
/// The item's service name (generic passwords). Part of the primary key.
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
/// Application-defined data attached to a generic password (not secret, searchable).
nonisolated(unsafe) public let kSecAttrGeneric: CFString = "gena"
/// The item's persistent reference, returned as an attribute; Apple's spelling since iOS 16 / macOS 13.
nonisolated(unsafe) public let kSecAttrPersistentReference: CFString = "persistref"
/// The item's persistent reference under its earlier, misspelled name (same value as `kSecAttrPersistentReference`).
nonisolated(unsafe) public let kSecAttrPersistantReference: CFString = "persistref"
/// A hint naming the iCloud Keychain view the item synchronises in.
nonisolated(unsafe) public let kSecAttrSyncViewHint: CFString = "vwht"
/// The token (for example the Secure Enclave) that holds the item; set only when the item is created.
nonisolated(unsafe) public let kSecAttrTokenID: CFString = "tkid"

// MARK: - Attribute keys: internet passwords

/// The security domain (for example an HTTP realm) of an internet password. Part of the primary key.
nonisolated(unsafe) public let kSecAttrSecurityDomain: CFString = "sdmn"
/// The server's domain name or IP address of an internet password. Part of the primary key.
nonisolated(unsafe) public let kSecAttrServer: CFString = "srvr"
/// The protocol of an internet password (one of the `kSecAttrProtocol*` values). Part of the primary key.
nonisolated(unsafe) public let kSecAttrProtocol: CFString = "ptcl"
/// The authentication scheme of an internet password (one of the `kSecAttrAuthenticationType*` values). Part of the primary key.
nonisolated(unsafe) public let kSecAttrAuthenticationType: CFString = "atyp"
/// The network port of an internet password (a number). Part of the primary key.
nonisolated(unsafe) public let kSecAttrPort: CFString = "port"
/// The path component of the URL of an internet password. Part of the primary key.
nonisolated(unsafe) public let kSecAttrPath: CFString = "path"

// MARK: - Attribute keys: AppleShare (defined for source compatibility)

/// The volume name of an AppleShare password.
nonisolated(unsafe) public let kSecAttrVolume: CFString = "volm"
/// The server address of an AppleShare password.
nonisolated(unsafe) public let kSecAttrAddress: CFString = "addr"
/// The AFP server signature of an AppleShare password.
nonisolated(unsafe) public let kSecAttrAFPServerSignature: CFString = "afps"

// MARK: - Attribute keys: certificates

/// An alias (for example an email address) stored with a certificate.
nonisolated(unsafe) public let kSecAttrAlias: CFString = "alis"
/// The DER-encoded subject name of a certificate (read-only).
nonisolated(unsafe) public let kSecAttrSubject: CFString = "subj"
/// The DER-encoded issuer name of a certificate (read-only). Part of the primary key.
nonisolated(unsafe) public let kSecAttrIssuer: CFString = "issr"
/// The DER-encoded serial number of a certificate (read-only). Part of the primary key.
nonisolated(unsafe) public let kSecAttrSerialNumber: CFString = "slnr"
/// The subject key identifier of a certificate (read-only).
nonisolated(unsafe) public let kSecAttrSubjectKeyID: CFString = "skid"
/// The hash of a certificate's public key (read-only).
nonisolated(unsafe) public let kSecAttrPublicKeyHash: CFString = "pkhh"
/// The certificate type (a `CSSM_CERT_TYPE` number, read-only). Part of the primary key.
nonisolated(unsafe) public let kSecAttrCertificateType: CFString = "ctyp"
/// The certificate encoding (a `CSSM_CERT_ENCODING` number, read-only).
nonisolated(unsafe) public let kSecAttrCertificateEncoding: CFString = "cenc"

// MARK: - Attribute keys: cryptographic keys

/// Whether a key is public, private or symmetric (one of the `kSecAttrKeyClass*` values). Part of the primary key.
nonisolated(unsafe) public let kSecAttrKeyClass: CFString = "kcls"
/// The key's application label, usually the hash of its public key. Part of the primary key.
nonisolated(unsafe) public let kSecAttrApplicationLabel: CFString = "klbl"
/// Whether a key is stored in the keychain when it is generated (a Boolean).
nonisolated(unsafe) public let kSecAttrIsPermanent: CFString = "perm"
/// Whether a key is private to its creator (a Boolean).
nonisolated(unsafe) public let kSecAttrIsPrivate: CFString = "priv"
/// Whether a key's attributes may be changed (a Boolean).
nonisolated(unsafe) public let kSecAttrIsModifiable: CFString = "modi"
/// Application-defined tag data of a key. Part of the primary key.
nonisolated(unsafe) public let kSecAttrApplicationTag: CFString = "atag"
/// The creator of a key, stored as a number (same raw value as `kSecAttrCreator`). Part of the primary key.
nonisolated(unsafe) public let kSecAttrKeyCreator: CFString = "crtr"
/// The algorithm of a key (one of the `kSecAttrKeyType*` values; same raw value as `kSecAttrType`). Part of the primary key.
nonisolated(unsafe) public let kSecAttrKeyType: CFString = "type"
/// The key size in bits (a number). Part of the primary key.
nonisolated(unsafe) public let kSecAttrKeySizeInBits: CFString = "bsiz"
/// The effective key size in bits (a number). Part of the primary key.
nonisolated(unsafe) public let kSecAttrEffectiveKeySize: CFString = "esiz"
/// The date from which a key may be used. Part of the primary key.
nonisolated(unsafe) public let kSecAttrStartDate: CFString = "sdat"
/// The date after which a key may no longer be used. Part of the primary key.
nonisolated(unsafe) public let kSecAttrEndDate: CFString = "edat"
/// Whether a key is sensitive (cannot be exported in the clear; a Boolean).
nonisolated(unsafe) public let kSecAttrIsSensitive: CFString = "sens"
/// Whether a key has always been sensitive (a Boolean, read-only).
nonisolated(unsafe) public let kSecAttrWasAlwaysSensitive: CFString = "asen"
/// Whether a key may be exported (a Boolean).
nonisolated(unsafe) public let kSecAttrIsExtractable: CFString = "extr"
/// Whether a key has never been exportable (a Boolean, read-only).
nonisolated(unsafe) public let kSecAttrWasNeverExtractable: CFString = "next"
/// Whether a key may be used to encrypt data (a Boolean).
nonisolated(unsafe) public let kSecAttrCanEncrypt: CFString = "encr"
/// Whether a key may be used to decrypt data (a Boolean).
nonisolated(unsafe) public let kSecAttrCanDecrypt: CFString = "decr"
/// Whether a key may be used to derive other keys (a Boolean).
nonisolated(unsafe) public let kSecAttrCanDerive: CFString = "drve"
/// Whether a key may be used to create signatures (a Boolean).
nonisolated(unsafe) public let kSecAttrCanSign: CFString = "sign"
/// Whether a key may be used to verify signatures (a Boolean).
nonisolated(unsafe) public let kSecAttrCanVerify: CFString = "vrfy"
/// Whether a key may be used to sign with message recovery (a Boolean).
nonisolated(unsafe) public let kSecAttrCanSignRecover: CFString = "snrc"
/// Whether a key may be used to verify with message recovery (a Boolean).
nonisolated(unsafe) public let kSecAttrCanVerifyRecover: CFString = "vyrc"
/// Whether a key may be used to wrap another key (a Boolean).
nonisolated(unsafe) public let kSecAttrCanWrap: CFString = "wrap"
/// Whether a key may be used to unwrap another key (a Boolean).
nonisolated(unsafe) public let kSecAttrCanUnwrap: CFString = "unwp"

// MARK: - Attribute keys: macOS only (Apple: not available on iOS)

/// The legacy file keychain's access object of an item (a `SecAccess`); macOS only.
nonisolated(unsafe) public let kSecAttrAccess: CFString = "acls"
/// The pseudo-random function used to derive a key from a password (one of the `kSecAttrPRF*` values); macOS only.
nonisolated(unsafe) public let kSecAttrPRF: CFString = "prf"
/// The salt used to derive a key from a password (data); macOS only.
nonisolated(unsafe) public let kSecAttrSalt: CFString = "salt"
/// The number of rounds used to derive a key from a password (a number); macOS only.
nonisolated(unsafe) public let kSecAttrRounds: CFString = "rounds"

// MARK: - Search keys (kSecMatch*)

/// Search key: only certificates and identities that satisfy this `SecPolicy`.
nonisolated(unsafe) public let kSecMatchPolicy: CFString = "m_Policy"
/// Search key: only items contained in this array of item references.
nonisolated(unsafe) public let kSecMatchItemList: CFString = "m_ItemList"
/// Search key: the keychains to search (an array of `SecKeychain`; macOS legacy keychain).
nonisolated(unsafe) public let kSecMatchSearchList: CFString = "m_SearchList"
/// Search key: only certificates and identities whose chain leads to one of these DER-encoded issuers.
nonisolated(unsafe) public let kSecMatchIssuers: CFString = "m_Issuers"
/// Search key: only certificates and identities that carry this email address, or none at all.
nonisolated(unsafe) public let kSecMatchEmailAddressIfPresent: CFString = "m_EmailAddressIfPresent"
/// Search key: only certificates and identities whose subject contains this string.
nonisolated(unsafe) public let kSecMatchSubjectContains: CFString = "m_SubjectContains"
/// Search key: only internet passwords for this host or one of its subdomains.
nonisolated(unsafe) public let kSecMatchHostOrSubdomainOfHost: CFString = "m_HostOrSubdomainOfHost"
/// Search key: compare strings ignoring case (a Boolean; no effect on the data-protection keychain).
nonisolated(unsafe) public let kSecMatchCaseInsensitive: CFString = "m_CaseInsensitive"
/// Search key: only certificates and identities that are trusted (a Boolean).
nonisolated(unsafe) public let kSecMatchTrustedOnly: CFString = "m_TrustedOnly"
/// Search key: only certificates and identities valid on this date (a date, or `kCFNull` for now).
nonisolated(unsafe) public let kSecMatchValidOnDate: CFString = "m_ValidOnDate"
/// Search key: how many results to return (`kSecMatchLimitOne`, `kSecMatchLimitAll`, or a number).
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
/// Value of `kSecMatchLimit`: return only the first matching item.
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
/// Value of `kSecMatchLimit`: return every matching item.
nonisolated(unsafe) public let kSecMatchLimitAll: CFString = "m_LimitAll"
/// Search key: only certificates whose subject starts with this string; macOS only.
nonisolated(unsafe) public let kSecMatchSubjectStartsWith: CFString = "m_SubjectStartsWith"
/// Search key: only certificates whose subject ends with this string; macOS only.
nonisolated(unsafe) public let kSecMatchSubjectEndsWith: CFString = "m_SubjectEndsWith"
/// Search key: only certificates whose subject equals this string; macOS only.
nonisolated(unsafe) public let kSecMatchSubjectWholeString: CFString = "m_SubjectWholeString"
/// Search key: compare strings ignoring diacritics (a Boolean); macOS only.
nonisolated(unsafe) public let kSecMatchDiacriticInsensitive: CFString = "m_DiacriticInsensitive"
/// Search key: compare strings ignoring character width (a Boolean); macOS only.
nonisolated(unsafe) public let kSecMatchWidthInsensitive: CFString = "m_WidthInsensitive"

// MARK: - Return keys (kSecReturn*)

/// Return key: return the item's secret data (a Boolean).
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
/// Return key: return the item's attributes as a dictionary (a Boolean).
nonisolated(unsafe) public let kSecReturnAttributes: CFString = "r_Attributes"
/// Return key: return a reference to the item (`SecKey`, `SecCertificate`, `SecIdentity`, or data for passwords; a Boolean).
nonisolated(unsafe) public let kSecReturnRef: CFString = "r_Ref"
/// Return key: return a persistent reference to the item (a Boolean).
nonisolated(unsafe) public let kSecReturnPersistentRef: CFString = "r_PersistentRef"

// MARK: - Value keys (kSecValue*)

/// Value key: the item's secret data (for passwords, the password bytes).
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
/// Value key: a reference to the item (`SecKey`, `SecCertificate` or `SecIdentity`).
nonisolated(unsafe) public let kSecValueRef: CFString = "v_Ref"
/// Value key: a persistent reference to the item (data).
nonisolated(unsafe) public let kSecValuePersistentRef: CFString = "v_PersistentRef"

// MARK: - Use keys (kSecUse*)

/// Use key: an array of item references to add or search instead of the keychain (not supported by the data-protection keychain).
nonisolated(unsafe) public let kSecUseItemList: CFString = "u_ItemList"
/// Use key: the reason shown to the user when authentication is needed (deprecated; use an `LAContext`).
nonisolated(unsafe) public let kSecUseOperationPrompt: CFString = "u_OpPrompt"
/// Use key: fail instead of showing authentication UI (a Boolean; deprecated in favour of `kSecUseAuthenticationUI`).
nonisolated(unsafe) public let kSecUseNoAuthenticationUI: CFString = "u_NoAuthUI"
/// Use key: whether the user may be asked to authenticate (one of the `kSecUseAuthenticationUI*` values).
nonisolated(unsafe) public let kSecUseAuthenticationUI: CFString = "u_AuthUI"
/// Value of `kSecUseAuthenticationUI`: show authentication UI when needed (the default).
nonisolated(unsafe) public let kSecUseAuthenticationUIAllow: CFString = "u_AuthUIA"
/// Value of `kSecUseAuthenticationUI`: fail with `errSecInteractionNotAllowed` instead of showing UI.
nonisolated(unsafe) public let kSecUseAuthenticationUIFail: CFString = "u_AuthUIF"
/// Value of `kSecUseAuthenticationUI`: silently skip items that would need authentication.
nonisolated(unsafe) public let kSecUseAuthenticationUISkip: CFString = "u_AuthUIS"
/// Use key: the `LAContext` to authenticate with.
nonisolated(unsafe) public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"
/// Use key: on macOS, use the data-protection (iOS-style) keychain (a Boolean; ignored by the keychain itself).
nonisolated(unsafe) public let kSecUseDataProtectionKeychain: CFString = "nleg"
/// Use key: on tvOS, use the keychain shared by all users instead of the current user's (a Boolean).
nonisolated(unsafe) public let kSecUseUserIndependentKeychain: CFString = "u_UserIndependentKeychain"
/// Use key: the legacy file keychain (`SecKeychain`) to add the item to; macOS only.
nonisolated(unsafe) public let kSecUseKeychain: CFString = "u_Keychain"

// MARK: - Values of kSecAttrAccessible

/// Readable only while the device is unlocked; migrates to new devices through backups.
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
/// Readable after the first unlock following a restart; migrates to new devices through backups.
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
/// Always readable, even while locked (deprecated); migrates to new devices through backups.
nonisolated(unsafe) public let kSecAttrAccessibleAlways: CFString = "dk"
/// Readable only while the device is unlocked; never leaves this device.
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
/// Readable after the first unlock following a restart; never leaves this device.
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
/// Always readable, even while locked (deprecated); never leaves this device.
nonisolated(unsafe) public let kSecAttrAccessibleAlwaysThisDeviceOnly: CFString = "dku"
/// Readable only while unlocked and only while a passcode is set; never leaves this device.
nonisolated(unsafe) public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"

// MARK: - Values of kSecAttrSynchronizable

/// Query value of `kSecAttrSynchronizable`: match both synchronised and local items.
nonisolated(unsafe) public let kSecAttrSynchronizableAny: CFString = "syna"

// MARK: - Values of kSecAttrProtocol (four characters, some with a trailing space)

/// Internet password protocol: FTP.
nonisolated(unsafe) public let kSecAttrProtocolFTP: CFString = "ftp "
/// Internet password protocol: a client-side FTP account.
nonisolated(unsafe) public let kSecAttrProtocolFTPAccount: CFString = "ftpa"
/// Internet password protocol: HTTP.
nonisolated(unsafe) public let kSecAttrProtocolHTTP: CFString = "http"
/// Internet password protocol: IRC.
nonisolated(unsafe) public let kSecAttrProtocolIRC: CFString = "irc "
/// Internet password protocol: NNTP.
nonisolated(unsafe) public let kSecAttrProtocolNNTP: CFString = "nntp"
/// Internet password protocol: POP3.
nonisolated(unsafe) public let kSecAttrProtocolPOP3: CFString = "pop3"
/// Internet password protocol: SMTP.
nonisolated(unsafe) public let kSecAttrProtocolSMTP: CFString = "smtp"
/// Internet password protocol: SOCKS.
nonisolated(unsafe) public let kSecAttrProtocolSOCKS: CFString = "sox "
/// Internet password protocol: IMAP.
nonisolated(unsafe) public let kSecAttrProtocolIMAP: CFString = "imap"
/// Internet password protocol: LDAP.
nonisolated(unsafe) public let kSecAttrProtocolLDAP: CFString = "ldap"
/// Internet password protocol: AFP over AppleTalk.
nonisolated(unsafe) public let kSecAttrProtocolAppleTalk: CFString = "atlk"
/// Internet password protocol: AFP over TCP.
nonisolated(unsafe) public let kSecAttrProtocolAFP: CFString = "afp "
/// Internet password protocol: Telnet.
nonisolated(unsafe) public let kSecAttrProtocolTelnet: CFString = "teln"
/// Internet password protocol: SSH.
nonisolated(unsafe) public let kSecAttrProtocolSSH: CFString = "ssh "
/// Internet password protocol: FTP over TLS/SSL.
nonisolated(unsafe) public let kSecAttrProtocolFTPS: CFString = "ftps"
/// Internet password protocol: HTTP over TLS/SSL.
nonisolated(unsafe) public let kSecAttrProtocolHTTPS: CFString = "htps"
/// Internet password protocol: an HTTP proxy.
nonisolated(unsafe) public let kSecAttrProtocolHTTPProxy: CFString = "htpx"
/// Internet password protocol: an HTTPS proxy.
nonisolated(unsafe) public let kSecAttrProtocolHTTPSProxy: CFString = "htsx"
/// Internet password protocol: an FTP proxy.
nonisolated(unsafe) public let kSecAttrProtocolFTPProxy: CFString = "ftpx"
/// Internet password protocol: SMB.
nonisolated(unsafe) public let kSecAttrProtocolSMB: CFString = "smb "
/// Internet password protocol: RTSP.
nonisolated(unsafe) public let kSecAttrProtocolRTSP: CFString = "rtsp"
/// Internet password protocol: an RTSP proxy.
nonisolated(unsafe) public let kSecAttrProtocolRTSPProxy: CFString = "rtsx"
/// Internet password protocol: DAAP.
nonisolated(unsafe) public let kSecAttrProtocolDAAP: CFString = "daap"
/// Internet password protocol: EPPC (remote Apple Events).
nonisolated(unsafe) public let kSecAttrProtocolEPPC: CFString = "eppc"
/// Internet password protocol: IPP.
nonisolated(unsafe) public let kSecAttrProtocolIPP: CFString = "ipp "
/// Internet password protocol: NNTP over TLS/SSL.
nonisolated(unsafe) public let kSecAttrProtocolNNTPS: CFString = "ntps"
/// Internet password protocol: LDAP over TLS/SSL.
nonisolated(unsafe) public let kSecAttrProtocolLDAPS: CFString = "ldps"
/// Internet password protocol: Telnet over TLS/SSL.
nonisolated(unsafe) public let kSecAttrProtocolTelnetS: CFString = "tels"
/// Internet password protocol: IMAP over TLS/SSL.
nonisolated(unsafe) public let kSecAttrProtocolIMAPS: CFString = "imps"
/// Internet password protocol: IRC over TLS/SSL.
nonisolated(unsafe) public let kSecAttrProtocolIRCS: CFString = "ircs"
/// Internet password protocol: POP3 over TLS/SSL.
nonisolated(unsafe) public let kSecAttrProtocolPOP3S: CFString = "pops"

// MARK: - Values of kSecAttrAuthenticationType

/// Internet password authentication: Windows NT LAN Manager.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeNTLM: CFString = "ntlm"
/// Internet password authentication: Microsoft Network default.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeMSN: CFString = "msna"
/// Internet password authentication: Distributed Password Authentication.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDPA: CFString = "dpaa"
/// Internet password authentication: Remote Password Authentication.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeRPA: CFString = "rpaa"
/// Internet password authentication: HTTP Basic.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPBasic: CFString = "http"
/// Internet password authentication: HTTP Digest.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPDigest: CFString = "httd"
/// Internet password authentication: an HTML form.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTMLForm: CFString = "form"
/// Internet password authentication: the default scheme.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDefault: CFString = "dflt"

// MARK: - Values of kSecAttrKeyClass

/// Key class: a public key.
nonisolated(unsafe) public let kSecAttrKeyClassPublic: CFString = "0"
/// Key class: a private key.
nonisolated(unsafe) public let kSecAttrKeyClassPrivate: CFString = "1"
/// Key class: a symmetric key.
nonisolated(unsafe) public let kSecAttrKeyClassSymmetric: CFString = "2"

// MARK: - Values of kSecAttrKeyType

/// Key algorithm: RSA.
nonisolated(unsafe) public let kSecAttrKeyTypeRSA: CFString = "42"
/// Key algorithm: elliptic curve (deprecated name of `kSecAttrKeyTypeECSECPrimeRandom`).
nonisolated(unsafe) public let kSecAttrKeyTypeEC: CFString = "73"
/// Key algorithm: elliptic curve over a prime field (NIST P-256, P-384, P-521).
nonisolated(unsafe) public let kSecAttrKeyTypeECSECPrimeRandom: CFString = "73"
/// Key algorithm: DES; macOS only.
nonisolated(unsafe) public let kSecAttrKeyTypeDES: CFString = "14"
/// Key algorithm: Triple DES; macOS only.
nonisolated(unsafe) public let kSecAttrKeyType3DES: CFString = "17"
/// Key algorithm: RC2; macOS only.
nonisolated(unsafe) public let kSecAttrKeyTypeRC2: CFString = "23"
/// Key algorithm: RC4; macOS only.
nonisolated(unsafe) public let kSecAttrKeyTypeRC4: CFString = "25"
/// Key algorithm: DSA; macOS only.
nonisolated(unsafe) public let kSecAttrKeyTypeDSA: CFString = "43"
/// Key algorithm: CAST; macOS only.
nonisolated(unsafe) public let kSecAttrKeyTypeCAST: CFString = "56"
/// Key algorithm: ECDSA (same raw value as `kSecAttrKeyTypeECSECPrimeRandom`); macOS only.
nonisolated(unsafe) public let kSecAttrKeyTypeECDSA: CFString = "73"
/// Key algorithm: AES; macOS only.
nonisolated(unsafe) public let kSecAttrKeyTypeAES: CFString = "2147483649"

// MARK: - Values of kSecAttrPRF (macOS only)

/// Password-derivation pseudo-random function: HMAC-SHA1; macOS only.
nonisolated(unsafe) public let kSecAttrPRFHmacAlgSHA1: CFString = "hsha1"
/// Password-derivation pseudo-random function: HMAC-SHA224; macOS only.
nonisolated(unsafe) public let kSecAttrPRFHmacAlgSHA224: CFString = "hsha224"
/// Password-derivation pseudo-random function: HMAC-SHA256; macOS only.
nonisolated(unsafe) public let kSecAttrPRFHmacAlgSHA256: CFString = "hsha256"
/// Password-derivation pseudo-random function: HMAC-SHA384; macOS only.
nonisolated(unsafe) public let kSecAttrPRFHmacAlgSHA384: CFString = "hsha384"
/// Password-derivation pseudo-random function: HMAC-SHA512; macOS only.
nonisolated(unsafe) public let kSecAttrPRFHmacAlgSHA512: CFString = "hsha512"

// MARK: - Tokens and access groups

/// Value of `kSecAttrTokenID`: the key is generated in and never leaves the Secure Enclave.
nonisolated(unsafe) public let kSecAttrTokenIDSecureEnclave: CFString = "com.apple.setoken"
/// The access group of items that live on external tokens (read-only for apps).
nonisolated(unsafe) public let kSecAttrAccessGroupToken: CFString = "com.apple.token"

// MARK: - Key generation parameters

/// Key-generation parameter: a dictionary of attributes for the generated private key.
nonisolated(unsafe) public let kSecPrivateKeyAttrs: CFString = "private"
/// Key-generation parameter: a dictionary of attributes for the generated public key.
nonisolated(unsafe) public let kSecPublicKeyAttrs: CFString = "public"

// MARK: - Shared web credentials

/// The key of the password in a dictionary returned by the shared web credentials API.
nonisolated(unsafe) public let kSecSharedPassword: CFString = "spwd"
#endif
