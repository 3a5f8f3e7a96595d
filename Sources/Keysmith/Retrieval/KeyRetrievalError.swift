import Foundation
import KeychainServices

/// Why a key lookup, a key source or a key generator failed.
///
/// Every message says what happened, why, and what to do. Messages name identifiers,
/// files, variables and keychain services, never key material.
///
/// - Note: A key that simply does not exist is not an error: ``KeyRetriever/retrieve(_:)``
///   returns `nil`.
public enum KeyRetrievalError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// The identifier was empty (or otherwise unusable as a key name).
    case invalidIdentifier(String, reason: String)
    /// The version text cannot be stored (empty, or contains the reserved `@`).
    case invalidVersion(String, reason: String)
    /// The source priority was empty, so no source would ever be consulted.
    case emptyPriority
    /// A sensitive key's first copy is in a plaintext source, and the policy forbids
    /// serving it there.
    case sensitiveKeyInPlaintextSource(
        identifier: String, matchedName: String, source: KeySourceKind, location: String)
    /// A source failed while looking up a sensitive key, so the lookup stopped instead of
    /// moving on to a less secure source.
    case sourceFailed(identifier: String, source: KeySourceKind, sourceDescription: String, underlying: any Error)
    /// A keychain call returned an error status (the raw `OSStatus` is kept).
    case keychain(operation: String, status: OSStatus, service: String, account: String?)
    /// A configuration or keys file could not be read from disk.
    case unreadableFile(path: String, reason: String)
    /// A configuration or keys file was read but its content is not valid.
    case malformedFile(path: String, key: String?, reason: String)
    /// No source could be listed, so an audit has nothing to report.
    case auditFailed(reasons: [String])

    /// The full message: what happened, why, and what to do.
    public var description: String {
        switch self {
        case .invalidIdentifier(let identifier, let reason):
            return "Invalid key identifier \"\(identifier)\": \(reason). Use a non-empty name such as \"api_key\"."
        case .invalidVersion(let version, let reason):
            return "Invalid key version \"\(version)\": \(reason). Use a dotted number such as \"2024.06.01\"."
        case .emptyPriority:
            return "The source priority is empty, so no key could ever be found. "
                + "Pass at least one source kind, for example [.keychain, .configFile]."
        case .sensitiveKeyInPlaintextSource(let identifier, let matchedName, let source, let location):
            return "Refused to serve sensitive key \"\(identifier)\" from \(source) (\(location), "
                + "stored as \"\(matchedName)\"): the policy forbids plaintext copies of sensitive keys "
                + "in this build, and no keychain copy was found first. Store the key in the keychain "
                + "(KeychainKeySource.store(_:for:version:) or `keysmith` CLI), then delete it from \(location)."
        case .sourceFailed(let identifier, let source, let sourceDescription, let underlying):
            return "Lookup of sensitive key \"\(identifier)\" stopped because the \(source) source "
                + "(\(sourceDescription)) failed: \(underlying). The lookup does not fall back to a less "
                + "secure source for sensitive keys; fix the source (for a locked keychain, retry after "
                + "unlock) and retry."
        case .keychain(let operation, let status, let service, let account):
            let item = account.map { "service \"\(service)\", account \"\($0)\"" } ?? "service \"\(service)\""
            let (why, fix) = KeyRetrievalError.explain(status: status)
            return "Keychain \(operation) failed for \(item) with status \(status): \(why). \(fix)"
        case .unreadableFile(let path, let reason):
            return "Could not read key file \(path): \(reason). Check that the file exists, is "
                + "included in the bundle, and is readable."
        case .malformedFile(let path, let key, let reason):
            let place = key.map { "entry \"\($0)\" of \(path)" } ?? path
            return "Malformed key file: \(place): \(reason). Fix the file; see docs/RETRIEVAL.md "
                + "(\"Config files\") for the accepted forms."
        case .auditFailed(let reasons):
            return "The audit could not list any source: \(reasons.joined(separator: "; ")). "
                + "Fix the sources (unlock the keychain, repair the files) and run it again."
        }
    }

    /// The same as ``description``.
    public var errorDescription: String? { description }

    /// The raw keychain status, when the error came from the keychain.
    public var status: OSStatus? {
        switch self {
        case .keychain(_, let status, _, _): return status
        case .sourceFailed(_, _, _, let underlying): return (underlying as? KeyRetrievalError)?.status
        default: return nil
        }
    }

    /// Why a keychain status happens and what to do about it.
    /// This is the one place that maps keychain statuses for the retriever.
    static func explain(status: OSStatus) -> (why: String, fix: String) {
        switch status {
        case errSecItemNotFound:
            return ("no item matches the query", "Check that service and account match what was stored.")
        case errSecDuplicateItem:
            return ("an item with the same service and account already exists", "Update the item instead of adding it.")
        case errSecInteractionNotAllowed:
            return (
                "the keychain is locked (the item's protection class needs an unlocked device)",
                "Retry after the device or keychain is unlocked, or store keys needed in the background "
                    + "with an AfterFirstUnlock accessibility."
            )
        case errSecMissingEntitlement:
            return (
                "the app is not entitled to the access group",
                "Add the group to the keychain-access-groups entitlement, or use an access group the app has."
            )
        case errSecAuthFailed, errSecUserCanceled:
            return ("authentication failed or was cancelled", "Ask the user to authenticate again.")
        case errSecParam:
            return ("the query has an invalid or conflicting parameter", "This is a bug in the query; report it.")
        case errSecNotAvailable, errSecNoSuchKeychain:
            return ("no keychain is available", "Check that the keychain exists and is reachable.")
        case errSecDecode:
            return ("the stored item could not be decoded", "Remove the damaged item and store the key again.")
        default:
            let message = (SecCopyErrorMessageString(status, nil) as String?) ?? "unknown keychain error"
            return (message, "See the keychain status table in docs/RETRIEVAL.md.")
        }
    }
}
