import Foundation
import KeychainServices

/// The values of `--access-control`: who must be present to read an item's secret.
enum AccessControlOption: String, CaseIterable {
    /// A fingerprint, or the keychain passphrase instead (`.userPresence`).
    case userPresence = "user-presence"
    /// The keychain passphrase (`.devicePasscode`).
    case devicePasscode = "device-passcode"
    /// Any enrolled fingerprint (`.biometryAny`).
    case biometryAny = "biometry-any"
    /// The fingerprints enrolled now; enrolling or removing one makes the item unreadable
    /// (`.biometryCurrentSet`).
    case biometryCurrentSet = "biometry-current-set"

    /// The access-control flags.
    var flags: SecAccessControlCreateFlags {
        switch self {
        case .userPresence: return .userPresence
        case .devicePasscode: return .devicePasscode
        case .biometryAny: return .biometryAny
        case .biometryCurrentSet: return .biometryCurrentSet
        }
    }

    /// `user-presence, device-passcode, biometry-any, biometry-current-set`.
    static var namesList: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The option named on the command line, in any case, with dashes, underscores or in
    /// Apple's spelling (`biometryAny`).
    init?(commandLineName: String) {
        let folded = commandLineName.lowercased().filter { $0 != "-" && $0 != "_" }
        guard let match = AccessControlOption.allCases.first(where: { $0.rawValue.replacingOccurrences(of: "-", with: "") == folded })
        else { return nil }
        self = match
    }
}
