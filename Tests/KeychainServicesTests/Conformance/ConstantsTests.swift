import Foundation
import KeychainServices
import Testing

extension Conformance {
/// Reference §1 (raw values of the kSec* constants) and §4 (OSStatus numbers and
/// SecCopyErrorMessageString texts).
struct ConstantsTests {
    private func check(_ table: [(CFString, String)], sourceLocation: SourceLocation = #_sourceLocation) {
        for (constant, raw) in table {
            #expect(constant as String == raw, "expected raw value '\(raw)'", sourceLocation: sourceLocation)
        }
    }

    // §1.1
    @Test func classKeyAndValues() {
        check([
            (kSecClass, "class"), (kSecClassGenericPassword, "genp"), (kSecClassInternetPassword, "inet"),
            (kSecClassCertificate, "cert"), (kSecClassKey, "keys"), (kSecClassIdentity, "idnt"),
        ])
    }

    // §1.2
    @Test func attributeKeys() {
        check([
            (kSecAttrAccessible, "pdmn"), (kSecAttrAccessControl, "accc"), (kSecAttrAccessGroup, "agrp"),
            (kSecAttrSynchronizable, "sync"), (kSecAttrCreationDate, "cdat"), (kSecAttrModificationDate, "mdat"),
            (kSecAttrDescription, "desc"), (kSecAttrComment, "icmt"), (kSecAttrCreator, "crtr"), (kSecAttrType, "type"),
            (kSecAttrLabel, "labl"), (kSecAttrIsInvisible, "invi"), (kSecAttrIsNegative, "nega"),
            (kSecAttrAccount, "acct"), (kSecAttrService, "svce"), (kSecAttrGeneric, "gena"),
            (kSecAttrSecurityDomain, "sdmn"), (kSecAttrServer, "srvr"), (kSecAttrProtocol, "ptcl"),
            (kSecAttrAuthenticationType, "atyp"), (kSecAttrPort, "port"), (kSecAttrPath, "path"),
            (kSecAttrVolume, "volm"), (kSecAttrAddress, "addr"), (kSecAttrAFPServerSignature, "afps"),
            (kSecAttrAlias, "alis"), (kSecAttrSubject, "subj"), (kSecAttrIssuer, "issr"),
            (kSecAttrSerialNumber, "slnr"), (kSecAttrSubjectKeyID, "skid"), (kSecAttrPublicKeyHash, "pkhh"),
            (kSecAttrCertificateType, "ctyp"), (kSecAttrCertificateEncoding, "cenc"), (kSecAttrKeyClass, "kcls"),
            (kSecAttrApplicationLabel, "klbl"), (kSecAttrIsPermanent, "perm"), (kSecAttrIsPrivate, "priv"),
            (kSecAttrIsModifiable, "modi"), (kSecAttrApplicationTag, "atag"), (kSecAttrKeyCreator, "crtr"),
            (kSecAttrKeyType, "type"), (kSecAttrKeySizeInBits, "bsiz"), (kSecAttrEffectiveKeySize, "esiz"),
            (kSecAttrStartDate, "sdat"), (kSecAttrEndDate, "edat"), (kSecAttrIsSensitive, "sens"),
            (kSecAttrWasAlwaysSensitive, "asen"), (kSecAttrIsExtractable, "extr"), (kSecAttrWasNeverExtractable, "next"),
            (kSecAttrCanEncrypt, "encr"), (kSecAttrCanDecrypt, "decr"), (kSecAttrCanDerive, "drve"),
            (kSecAttrCanSign, "sign"), (kSecAttrCanVerify, "vrfy"), (kSecAttrCanSignRecover, "snrc"),
            (kSecAttrCanVerifyRecover, "vyrc"), (kSecAttrCanWrap, "wrap"), (kSecAttrCanUnwrap, "unwp"),
            (kSecAttrSyncViewHint, "vwht"), (kSecAttrTokenID, "tkid"),
            (kSecAttrPersistentReference, "persistref"), (kSecAttrPersistantReference, "persistref"),
        ])
    }

    // §1.2: the documented aliases share one raw value.
    @Test func attributeAliases() {
        #expect(kSecAttrKeyCreator as String == kSecAttrCreator as String)
        #expect(kSecAttrKeyType as String == kSecAttrType as String)
        #expect(kSecAttrPersistantReference as String == kSecAttrPersistentReference as String)
    }

    // §1.2 macOS-only extras.
    @Test func macOSOnlyAttributeKeys() {
        check([(kSecAttrAccess, "acls"), (kSecAttrPRF, "prf"), (kSecAttrSalt, "salt"), (kSecAttrRounds, "rounds")])
    }

    // §1.3
    @Test func matchKeys() {
        check([
            (kSecMatchPolicy, "m_Policy"), (kSecMatchItemList, "m_ItemList"), (kSecMatchSearchList, "m_SearchList"),
            (kSecMatchIssuers, "m_Issuers"), (kSecMatchEmailAddressIfPresent, "m_EmailAddressIfPresent"),
            (kSecMatchSubjectContains, "m_SubjectContains"), (kSecMatchHostOrSubdomainOfHost, "m_HostOrSubdomainOfHost"),
            (kSecMatchCaseInsensitive, "m_CaseInsensitive"), (kSecMatchTrustedOnly, "m_TrustedOnly"),
            (kSecMatchValidOnDate, "m_ValidOnDate"), (kSecMatchLimit, "m_Limit"), (kSecMatchLimitOne, "m_LimitOne"),
            (kSecMatchLimitAll, "m_LimitAll"), (kSecMatchSubjectStartsWith, "m_SubjectStartsWith"),
            (kSecMatchSubjectEndsWith, "m_SubjectEndsWith"), (kSecMatchSubjectWholeString, "m_SubjectWholeString"),
            (kSecMatchDiacriticInsensitive, "m_DiacriticInsensitive"), (kSecMatchWidthInsensitive, "m_WidthInsensitive"),
        ])
    }

    // §1.4
    @Test func returnAndValueKeys() {
        check([
            (kSecReturnData, "r_Data"), (kSecReturnAttributes, "r_Attributes"), (kSecReturnRef, "r_Ref"),
            (kSecReturnPersistentRef, "r_PersistentRef"), (kSecValueData, "v_Data"), (kSecValueRef, "v_Ref"),
            (kSecValuePersistentRef, "v_PersistentRef"),
        ])
    }

    // §1.5
    @Test func useKeys() {
        check([
            (kSecUseItemList, "u_ItemList"), (kSecUseOperationPrompt, "u_OpPrompt"), (kSecUseNoAuthenticationUI, "u_NoAuthUI"),
            (kSecUseAuthenticationUI, "u_AuthUI"), (kSecUseAuthenticationUIAllow, "u_AuthUIA"),
            (kSecUseAuthenticationUIFail, "u_AuthUIF"), (kSecUseAuthenticationUISkip, "u_AuthUIS"),
            (kSecUseAuthenticationContext, "u_AuthCtx"), (kSecUseUserIndependentKeychain, "u_UserIndependentKeychain"),
            (kSecUseDataProtectionKeychain, "nleg"), (kSecUseKeychain, "u_Keychain"),
        ])
    }

    // §1.6
    @Test func accessibilityValues() {
        check([
            (kSecAttrAccessibleWhenUnlocked, "ak"), (kSecAttrAccessibleAfterFirstUnlock, "ck"),
            (kSecAttrAccessibleAlways, "dk"), (kSecAttrAccessibleWhenUnlockedThisDeviceOnly, "aku"),
            (kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, "cku"), (kSecAttrAccessibleAlwaysThisDeviceOnly, "dku"),
            (kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, "akpu"),
        ])
        check([(kSecAttrSynchronizableAny, "syna")])
    }

    // §1.6 (note the trailing spaces)
    @Test func protocolValues() {
        check([
            (kSecAttrProtocolFTP, "ftp "), (kSecAttrProtocolFTPAccount, "ftpa"), (kSecAttrProtocolHTTP, "http"),
            (kSecAttrProtocolIRC, "irc "), (kSecAttrProtocolNNTP, "nntp"), (kSecAttrProtocolPOP3, "pop3"),
            (kSecAttrProtocolSMTP, "smtp"), (kSecAttrProtocolSOCKS, "sox "), (kSecAttrProtocolIMAP, "imap"),
            (kSecAttrProtocolLDAP, "ldap"), (kSecAttrProtocolAppleTalk, "atlk"), (kSecAttrProtocolAFP, "afp "),
            (kSecAttrProtocolTelnet, "teln"), (kSecAttrProtocolSSH, "ssh "), (kSecAttrProtocolFTPS, "ftps"),
            (kSecAttrProtocolHTTPS, "htps"), (kSecAttrProtocolHTTPProxy, "htpx"), (kSecAttrProtocolHTTPSProxy, "htsx"),
            (kSecAttrProtocolFTPProxy, "ftpx"), (kSecAttrProtocolSMB, "smb "), (kSecAttrProtocolRTSP, "rtsp"),
            (kSecAttrProtocolRTSPProxy, "rtsx"), (kSecAttrProtocolDAAP, "daap"), (kSecAttrProtocolEPPC, "eppc"),
            (kSecAttrProtocolIPP, "ipp "), (kSecAttrProtocolNNTPS, "ntps"), (kSecAttrProtocolLDAPS, "ldps"),
            (kSecAttrProtocolTelnetS, "tels"), (kSecAttrProtocolIMAPS, "imps"), (kSecAttrProtocolIRCS, "ircs"),
            (kSecAttrProtocolPOP3S, "pops"),
        ])
    }

    // §1.6
    @Test func authenticationTypeValues() {
        check([
            (kSecAttrAuthenticationTypeNTLM, "ntlm"), (kSecAttrAuthenticationTypeMSN, "msna"),
            (kSecAttrAuthenticationTypeDPA, "dpaa"), (kSecAttrAuthenticationTypeRPA, "rpaa"),
            (kSecAttrAuthenticationTypeHTTPBasic, "http"), (kSecAttrAuthenticationTypeHTTPDigest, "httd"),
            (kSecAttrAuthenticationTypeHTMLForm, "form"), (kSecAttrAuthenticationTypeDefault, "dflt"),
        ])
    }

    // §1.6
    @Test func keyClassAndKeyTypeValues() {
        check([(kSecAttrKeyClassPublic, "0"), (kSecAttrKeyClassPrivate, "1"), (kSecAttrKeyClassSymmetric, "2")])
        check([
            (kSecAttrKeyTypeRSA, "42"), (kSecAttrKeyTypeEC, "73"), (kSecAttrKeyTypeECSECPrimeRandom, "73"),
            (kSecAttrKeyTypeDES, "14"), (kSecAttrKeyType3DES, "17"), (kSecAttrKeyTypeRC2, "23"), (kSecAttrKeyTypeRC4, "25"),
            (kSecAttrKeyTypeDSA, "43"), (kSecAttrKeyTypeCAST, "56"), (kSecAttrKeyTypeECDSA, "73"),
            (kSecAttrKeyTypeAES, "2147483649"),
        ])
    }

    // §1.6
    @Test func tokenAndMiscValues() {
        check([
            (kSecAttrTokenIDSecureEnclave, "com.apple.setoken"), (kSecAttrAccessGroupToken, "com.apple.token"),
            (kSecPrivateKeyAttrs, "private"), (kSecPublicKeyAttrs, "public"), (kSecSharedPassword, "spwd"),
            (kSecAttrPRFHmacAlgSHA1, "hsha1"), (kSecAttrPRFHmacAlgSHA224, "hsha224"), (kSecAttrPRFHmacAlgSHA256, "hsha256"),
            (kSecAttrPRFHmacAlgSHA384, "hsha384"), (kSecAttrPRFHmacAlgSHA512, "hsha512"),
        ])
    }

    // §4: numeric values.
    @Test func statusCodeValues() {
        let table: [(OSStatus, OSStatus)] = [
            (errSecSuccess, 0), (errSecUnimplemented, -4), (errSecDiskFull, -34), (errSecIO, -36), (errSecParam, -50),
            (errSecWrPerm, -61), (errSecAllocate, -108), (errSecUserCanceled, -128), (errSecBadReq, -909),
            (errSecInternalComponent, -2070), (errSecNotAvailable, -25291), (errSecReadOnly, -25292),
            (errSecAuthFailed, -25293), (errSecDuplicateItem, -25299), (errSecItemNotFound, -25300),
            (errSecBufferTooSmall, -25301), (errSecDataTooLarge, -25302), (errSecNoSuchAttr, -25303),
            (errSecInvalidItemRef, -25304), (errSecNoSuchClass, -25306), (errSecInteractionNotAllowed, -25308),
            (errSecReadOnlyAttr, -25309), (errSecInteractionRequired, -25315), (errSecDataNotAvailable, -25316),
            (errSecDecode, -26275), (errSecMissingEntitlement, -34018), (errSecRestrictedAPI, -34020),
            (errSecInDarkWake, -25320), (errSecServiceNotAvailable, -67585), (errSecInvalidValue, -67694),
            (errSecMissingValue, -67871),
        ]
        for (constant, value) in table {
            #expect(constant == value)
        }
    }

    // §4: SecCopyErrorMessageString texts (the SecBase.h comments).
    @Test func errorMessageTexts() {
        let table: [(OSStatus, String)] = [
            (0, "No error."),
            (-4, "Function or operation not implemented."),
            (-34, "The disk is full."),
            (-36, "I/O error."),
            (-50, "One or more parameters passed to a function were not valid."),
            (-61, "Write permissions error."),
            (-108, "Failed to allocate memory."),
            (-128, "User canceled the operation."),
            (-909, "Bad parameter or invalid state for operation."),
            (-25291, "No keychain is available. You may need to restart your computer."),
            (-25292, "This keychain cannot be modified."),
            (-25293, "The user name or passphrase you entered is not correct."),
            (-25299, "The specified item already exists in the keychain."),
            (-25300, "The specified item could not be found in the keychain."),
            (-25301, "There is not enough memory available to use the specified item."),
            (-25302, "This item contains information which is too large or in a format that cannot be displayed."),
            (-25303, "The specified attribute does not exist."),
            (-25304, "The specified item is no longer valid. It may have been deleted from the keychain."),
            (-25306, "The specified item does not appear to be a valid keychain item."),
            (-25308, "User interaction is not allowed."),
            (-25309, "The specified attribute could not be modified."),
            (-25315, "User interaction is required, but is currently not allowed."),
            (-25316, "The contents of this item cannot be retrieved."),
            (-26275, "Unable to decode the provided data."),
            (-26276, "An internal error occured in the Security framework."),
            (-34018, "A required entitlement isn't present."),
            (-34020, "Client is restricted and is not permitted to perform this operation."),
            (-25320, "In dark wake, no UI possible"),
            (-67585, "The required service is not available."),
            (-67694, "An invalid value was detected."),
            (-67871, "A missing value was detected."),
        ]
        for (status, text) in table {
            let message = SecCopyErrorMessageString(status, nil).map { $0 as String }
            #expect(message == text, "SecCopyErrorMessageString(\(status))")
        }
    }

    // §4: errSecAuthNeeded's text (quoted truncated in the reference, so only its start).
    @Test func authNeededMessageText() {
        let message = SecCopyErrorMessageString(-25330, nil).map { $0 as String } ?? ""
        #expect(message.hasPrefix("Auth is needed before the requested action can be performed"))
    }

    // §4: an unknown code gives "OSStatus <n>".
    @Test func unknownCodeFallsBackToOSStatusText() {
        for status: OSStatus in [1, 12345, -99999, -12345678, Int32.min] {
            let message = SecCopyErrorMessageString(status, nil).map { $0 as String }
            #expect(message == "OSStatus \(status)")
        }
    }
}
}
