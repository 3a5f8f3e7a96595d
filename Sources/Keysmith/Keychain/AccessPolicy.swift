import Foundation
import KeychainServices

/// What a user must do before an item can be read: the access-control constraints of an
/// item (`SecAccessControlCreateFlags`), combined with the store's ``Accessibility``.
///
/// ```swift
/// let store = try KeychainStore(
///     service: "com.example.payments",
///     accessibility: .whenUnlockedThisDeviceOnly,
///     accessPolicy: .biometryCurrentSet)
/// ```
///
/// - ``biometryCurrentSet``: only the fingers or face enrolled now; adding or removing one
///   makes the item unreadable (right for payment PINs, too strict for an ordinary login).
/// - ``biometryAny``: any enrolled biometry, surviving enrollment changes.
/// - ``userPresence``: biometry, or the device passcode as a fallback.
/// - ``devicePasscode``: the device passcode.
/// - ``anyOf(_:)`` / ``allOf(_:)``: combinations.
///
/// - Note: Access-controlled items are never synchronizable, and reading them shows a
///   prompt, so read them from the foreground only (in the background the read fails with
///   ``KeychainError/Code/interactionNotAllowed``).
public struct AccessPolicy: Sendable, Hashable, CustomStringConvertible {
    /// One authentication factor.
    public enum Factor: String, Sendable, Hashable, CaseIterable {
        /// Biometry or the passcode (`.userPresence`).
        case userPresence
        /// Any enrolled biometry (`.biometryAny`).
        case biometryAny
        /// The biometry enrolled now (`.biometryCurrentSet`).
        case biometryCurrentSet
        /// The device passcode (`.devicePasscode`).
        case devicePasscode

        /// The flag for this factor: the one place factors map to Keychain Services.
        var flag: SecAccessControlCreateFlags {
            switch self {
            case .userPresence: return .userPresence
            case .biometryAny: return .biometryAny
            case .biometryCurrentSet: return .biometryCurrentSet
            case .devicePasscode: return .devicePasscode
            }
        }
    }

    /// How several factors combine.
    public enum Combination: String, Sendable, Hashable {
        /// Any one factor suffices (`.or`).
        case any
        /// Every factor is required (`.and`).
        case all
    }

    /// The factors, in the order given, without duplicates.
    public let factors: [Factor]
    /// How the factors combine (irrelevant for one factor).
    public let combination: Combination

    private init(factors: [Factor], combination: Combination) {
        var unique: [Factor] = []
        for factor in factors where !unique.contains(factor) { unique.append(factor) }
        self.factors = unique
        self.combination = combination
    }

    /// Biometry or the passcode.
    public static let userPresence = AccessPolicy(factors: [.userPresence], combination: .any)
    /// Any enrolled biometry.
    public static let biometryAny = AccessPolicy(factors: [.biometryAny], combination: .any)
    /// Only the biometry enrolled now.
    public static let biometryCurrentSet = AccessPolicy(factors: [.biometryCurrentSet], combination: .any)
    /// The device passcode.
    public static let devicePasscode = AccessPolicy(factors: [.devicePasscode], combination: .any)

    /// A policy satisfied by any one of `factors`.
    /// - Parameter factors: At least one factor.
    /// - Returns: The policy (an empty list gives ``userPresence``).
    public static func anyOf(_ factors: [Factor]) -> AccessPolicy {
        factors.isEmpty ? .userPresence : AccessPolicy(factors: factors, combination: .any)
    }

    /// A policy that requires every one of `factors`.
    /// - Parameter factors: At least one factor.
    /// - Returns: The policy (an empty list gives ``userPresence``).
    public static func allOf(_ factors: [Factor]) -> AccessPolicy {
        factors.isEmpty ? .userPresence : AccessPolicy(factors: factors, combination: .all)
    }

    /// Whether the policy can only be satisfied with biometry (so it needs biometry hardware
    /// and an enrollment): every factor is biometric, or the factors are all required and
    /// one is biometric.
    public var requiresBiometry: Bool {
        let biometric: (Factor) -> Bool = { $0 == .biometryAny || $0 == .biometryCurrentSet }
        switch combination {
        case .any: return factors.allSatisfy(biometric)
        case .all: return factors.contains(where: biometric)
        }
    }

    /// The Keychain Services flags for this policy.
    public var flags: SecAccessControlCreateFlags {
        var flags: SecAccessControlCreateFlags = []
        for factor in factors { flags.insert(factor.flag) }
        if factors.count > 1 { flags.insert(combination == .any ? .or : .and) }
        return flags
    }

    /// Creates the `SecAccessControl` for an item with this policy and `accessibility`.
    /// - Parameters:
    ///   - accessibility: The item's data-protection class.
    ///   - service: The store's service, for the error message.
    /// - Returns: The access-control object for `kSecAttrAccessControl`.
    /// - Throws: ``KeychainError`` with code ``KeychainError/Code/invalidParameters`` when
    ///   Keychain Services rejects the combination.
    func accessControl(for accessibility: Accessibility, service: String?) throws(KeychainError) -> SecAccessControl {
        guard let control = SecAccessControlCreateWithFlags(nil, accessibility.secValue, flags, nil) else {
            throw KeychainError(
                status: errSecParam, operation: .createAccessControl, service: service, key: nil,
                detail: "The access policy \(self) cannot be combined with accessibility \(accessibility).",
                fix: "Access-controlled items need a ThisDeviceOnly accessibility, for example "
                    + ".whenUnlockedThisDeviceOnly; change the store's accessibility or drop the policy.")
        }
        return control
    }

    /// For example `biometryAny`, or `anyOf(biometryAny, devicePasscode)`.
    public var description: String {
        if factors.count == 1 { return factors[0].rawValue }
        let list = factors.map(\.rawValue).joined(separator: ", ")
        return combination == .any ? "anyOf(\(list))" : "allOf(\(list))"
    }
}
