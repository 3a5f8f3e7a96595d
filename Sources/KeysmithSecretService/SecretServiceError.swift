/// An error the Secret Service answers a D-Bus call with: the D-Bus error name a client
/// matches on (the spec's `org.freedesktop.Secret.Error.*`, or a standard D-Bus error), and a
/// message for the person reading it. The message never holds a secret.
public struct SecretServiceError: Error, Sendable, CustomStringConvertible {
    /// The D-Bus error name, for example `org.freedesktop.Secret.Error.IsLocked`.
    public let name: String
    /// What went wrong and what to do about it.
    public let message: String

    /// An error with this D-Bus name and message.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }

    /// The object (collection, item, session or prompt) does not exist.
    public static func noSuchObject(_ message: String) -> SecretServiceError {
        SecretServiceError(name: "org.freedesktop.Secret.Error.NoSuchObject", message: message)
    }

    /// The collection or item is locked: unlock it first (`Unlock`, or `keysmith unlock`).
    public static func isLocked(_ message: String) -> SecretServiceError {
        SecretServiceError(name: "org.freedesktop.Secret.Error.IsLocked", message: message)
    }

    /// The session named in a call does not exist (closed, or its client left the bus).
    public static func noSession(_ message: String) -> SecretServiceError {
        SecretServiceError(name: "org.freedesktop.Secret.Error.NoSession", message: message)
    }

    /// The caller sent arguments the call cannot take.
    public static func invalidArguments(_ message: String) -> SecretServiceError {
        SecretServiceError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }

    /// The caller asked for something this service does not support (an unknown session algorithm).
    public static func notSupported(_ message: String) -> SecretServiceError {
        SecretServiceError(name: "org.freedesktop.DBus.Error.NotSupported", message: message)
    }

    /// The caller asked to act on another client's session or prompt.
    public static func accessDenied(_ message: String) -> SecretServiceError {
        SecretServiceError(name: "org.freedesktop.DBus.Error.AccessDenied", message: message)
    }

    /// The service failed for a reason of its own (the keychain's error, rephrased without secrets).
    public static func failed(_ message: String) -> SecretServiceError {
        SecretServiceError(name: "org.freedesktop.DBus.Error.Failed", message: message)
    }
}
