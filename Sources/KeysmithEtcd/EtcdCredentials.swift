import Foundation

/// An etcd username and password (etcd's own authentication: a token is requested with
/// them and sent with every call). The password never appears in descriptions or mirrors.
public struct EtcdCredentials: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The etcd user.
    public var username: String
    /// The password (kept out of every description).
    public var password: String

    /// Creates credentials.
    /// - Parameters:
    ///   - username: The etcd user.
    ///   - password: Its password.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// `EtcdCredentials(user NAME, password redacted)`.
    public var description: String { "EtcdCredentials(user \(username), password redacted)" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// The user only.
    public var customMirror: Mirror { Mirror(self, children: ["username": username]) }
}
