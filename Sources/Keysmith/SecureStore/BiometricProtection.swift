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
    /// Stores `value` so that reading it needs biometry, where biometry can be used.
    ///
    /// Checks ``Configuration/biometry`` first (seed 004, 4.4 and 6.1). Where biometry is
    /// available, the item gets `policy` with ``Configuration/biometricAccessibility``;
    /// where it is not (Linux without an authenticator, the simulator, a device with
    /// nothing enrolled), the value is stored with the plain
    /// ``Configuration/accessibility`` and the result says so, instead of creating an
    /// item that prompts in a loop or can never be read.
    ///
    /// ```swift
    /// switch try store.setBiometricProtected("pin", pin, in: "local_pin") {
    /// case .protected: break
    /// case .fellBack(_, let reason): showNotice("Stored without Face ID: \(reason)")
    /// }
    /// let pin = try store.get("pin", as: String.self, in: "local_pin", prompt: "Unlock your PIN")
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key; must not be empty.
    ///   - value: Any `Encodable`, serialized as by ``set(_:_:in:)``.
    ///   - namespace: The namespace (default ``Namespace/default``).
    ///   - policy: The access policy (default ``AccessPolicy/biometryCurrentSet``).
    /// - Returns: Whether the value is protected or stored with the fallback.
    /// - Throws: ``SecureStoreError``, as ``set(_:_:in:)``.
    /// - Note: On failure the previous value stays in place. Reading a protected value
    ///   prompts: read it in the foreground and handle ``SecureStoreError/Code/userCanceled``.
    @discardableResult
    public func setBiometricProtected<Value: Encodable>(
        _ key: String, _ value: Value, in namespace: Namespace = .default, policy: AccessPolicy = .biometryCurrentSet
    ) throws(SecureStoreError) -> BiometricProtection {
        var result = BiometricProtection.protected(policy)
        try logged(.setBiometricProtected, key: key, namespace: namespace) { () throws(SecureStoreError) in
            let data = try ValueCoding.encode(value, key: key, namespace: namespace.name, sizeLimit: configuration.sizeLimit)
            let protection: ItemProtection
            switch configuration.biometry.availability() {
            case .available:
                protection = .accessControl(policy, accessibility: configuration.biometricAccessibility)
                result = .protected(policy)
            case .unavailable(let reason):
                protection = .standard
                result = .fellBack(accessibility: configuration.accessibility, reason: reason)
            }
            try keychain(key: key, namespace: namespace) { () throws(KeychainError) in
                try provider.setItem(data, key: key, service: service(for: namespace), protection: protection)
            }
            if case .fellBack(_, let reason) = result { return .fellBack(reason: reason) }
            return .success
        }
        return result
    }
}
