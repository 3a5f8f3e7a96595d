import Foundation
import KeychainServices

/// What ``SecureStore/setBiometricProtected(_:_:in:policy:)`` did.
public enum BiometricProtection: Sendable, Hashable, CustomStringConvertible {
    /// The value is stored behind the access policy: reading it asks for biometry.
    case protected(AccessPolicy)
    /// Biometry cannot be used here, so the value is stored with the store's plain
    /// accessibility instead; the reason says why (no hardware, nothing enrolled, the
    /// simulator, a platform without an authenticator). No prompt will appear on reads.
    case fellBack(accessibility: Accessibility, reason: String)

    /// Whether the value is biometric-protected.
    public var isProtected: Bool {
        if case .protected = self { return true }
        return false
    }

    /// For example `protected(biometryCurrentSet)` or `fellBack(afterFirstUnlockThisDeviceOnly: …)`.
    public var description: String {
        switch self {
        case .protected(let policy): return "protected(\(policy))"
        case .fellBack(let accessibility, let reason): return "fellBack(\(accessibility): \(reason))"
        }
    }
}

extension SecureStore {
    /// Stores `value` behind `policy`, falling back to the plain accessibility only where a
    /// biometric policy cannot be satisfied.
    ///
    /// A policy that ``AccessPolicy/requiresBiometry`` (the default
    /// ``AccessPolicy/biometryCurrentSet``, ``AccessPolicy/biometryAny``) checks
    /// ``Configuration/biometry`` first. Where biometry is
    /// available, the item gets `policy` with ``Configuration/biometricAccessibility``;
    /// where it is not (Linux without an authenticator, the simulator, a device with
    /// nothing enrolled), the value is stored with the plain
    /// ``Configuration/accessibility`` and the result says so, instead of creating an
    /// item that prompts in a loop or can never be read. A policy that the passcode can
    /// satisfy (``AccessPolicy/userPresence``, ``AccessPolicy/devicePasscode``) is always
    /// applied, without a biometry check.
    ///
    /// ```swift
    /// switch try store.setBiometricProtected(pin, for: "pin", in: "local_pin") {
    /// case .protected: break
    /// case .fellBack(_, let reason): showNotice("Stored without Face ID: \(reason)")
    /// }
    /// let pin = try store.string(for: "pin", in: "local_pin", prompt: "Unlock your PIN")
    /// ```
    ///
    /// - Parameters:
    ///   - value: Any `Encodable`, serialized as by ``set(_:for:in:)``.
    ///   - key: The key; must not be empty.
    ///   - namespace: The namespace (default ``Namespace/default``).
    ///   - policy: The access policy (default ``AccessPolicy/biometryCurrentSet``).
    /// - Returns: Whether the value is protected or stored with the fallback.
    /// - Throws: ``SecureStoreError``, as ``set(_:for:in:)``; and
    ///   ``SecureStoreError/Code/authFailed`` when biometry is locked out
    ///   (``BiometryCapability/Availability/lockedOut(reason:)``): the value is not stored
    ///   unprotected, and the previous value stays; retry after the user unlocks biometry
    ///   with the passcode.
    /// - Note: On failure the previous value stays in place, except on the fallback path:
    ///   there an existing item is removed before the plain one is written (a keychain
    ///   update cannot strip an access policy), so a failed write after that removal leaves
    ///   no value. Reading a protected value prompts: read it in the foreground and handle
    ///   ``SecureStoreError/Code/userCanceled``.
    @discardableResult
    public func setBiometricProtected<Value: Encodable>(
        _ value: Value, for key: String, in namespace: Namespace = .default, policy: AccessPolicy = .biometryCurrentSet
    ) throws(SecureStoreError) -> BiometricProtection {
        var result = BiometricProtection.protected(policy)
        try logged(.setBiometricProtected, key: key, namespace: namespace) { () throws(SecureStoreError) in
            let data = try ValueCoding.encode(value, key: key, namespace: namespace.name, sizeLimit: configuration.sizeLimit)
            var fallbackReason: String?
            if policy.requiresBiometry {
                switch configuration.biometry.availability() {
                case .available:
                    break
                case .unavailable(let reason):
                    fallbackReason = reason
                case .lockedOut(let reason):
                    throw SecureStoreError(
                        .authFailed,
                        message: "Biometry is locked out (\(reason)), so the value was not stored with \(policy) and "
                            + "was not stored unprotected either; the previous value is unchanged. Ask the user to "
                            + "unlock biometry with the device passcode, then store it again.",
                        key: key, namespace: namespace.name)
                }
            }
            let itemService = service(for: namespace)
            if let fallbackReason {
                result = .fellBack(accessibility: configuration.accessibility, reason: fallbackReason)
                try keychain(key: key, namespace: namespace) { () throws(KeychainError) in
                    // An update keeps the access policy of an existing protected item: remove
                    // it so that the plain item the result promises is what is stored.
                    try provider.removeItem(key: key, service: itemService)
                    try provider.setItem(data, key: key, service: itemService, protection: .standard)
                }
            } else {
                result = .protected(policy)
                try keychain(key: key, namespace: namespace) { () throws(KeychainError) in
                    try provider.setItem(
                        data, key: key, service: itemService,
                        protection: .accessControl(policy, accessibility: configuration.biometricAccessibility))
                }
            }
            recordNamespace(namespace)
            if let fallbackReason { return .fellBack(reason: fallbackReason) }
            return .success
        }
        return result
    }

    /// Stores `value` under `key` with biometric protection: the older spelling of
    /// ``setBiometricProtected(_:for:in:policy:)`` (key first).
    /// - Parameters:
    ///   - key: The key; must not be empty.
    ///   - value: Any `Encodable`.
    ///   - namespace: The namespace (default ``Namespace/default``).
    ///   - policy: The access policy (default ``AccessPolicy/biometryCurrentSet``).
    /// - Returns: Whether the value is protected or stored with the fallback.
    /// - Throws: ``SecureStoreError``, as ``setBiometricProtected(_:for:in:policy:)``.
    @available(*, deprecated, message: "Use setBiometricProtected(_:for:in:policy:): the value first, as set(_:for:in:)")
    @discardableResult
    public func setBiometricProtected<Value: Encodable>(
        _ key: String, _ value: Value, in namespace: Namespace = .default, policy: AccessPolicy = .biometryCurrentSet
    ) throws(SecureStoreError) -> BiometricProtection {
        try setBiometricProtected(value, for: key, in: namespace, policy: policy)
    }
}
