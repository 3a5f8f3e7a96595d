import Foundation

/// One credential in git's credential-helper format: `key=value` lines ended by a blank
/// line or the end of input.
///
/// ```
/// protocol=https
/// host=git.example.com:8443
/// path=team/app.git
/// username=ci
/// password=…
/// ```
///
/// The attributes git's own helpers keep are parsed; `wwwauth[]` and any key this helper
/// does not know are ignored, as git asks helpers to do. Secret values (`password`,
/// `oauth_refresh_token`) are kept as bytes and zeroed by ``clear()``.
public struct GitCredential: Sendable {
    /// `https`, `http`, `imap`, ...
    public var `protocol`: String?
    /// The host, with `:port` when git gives one.
    public var host: String?
    /// The repository path (only when `credential.useHttpPath` is set).
    public var path: String?
    /// The user name.
    public var username: String?
    /// The password (secret).
    public var password: Data?
    /// When the password expires, in seconds since the epoch (as git sends it).
    public var passwordExpiryUTC: String?
    /// An OAuth refresh token (secret).
    public var oauthRefreshToken: Data?
    /// The capabilities git announced (`capability[]`), such as `state`.
    public var capabilities: [String] = []
    /// The `state[]` values git passed back.
    public var state: [String] = []

    /// An empty credential.
    public init() {}

    /// Parses git's format.
    ///
    /// ```swift
    /// let credential = try GitCredential(parsing: Data("protocol=https\nhost=example.com\n\n".utf8))
    /// // credential.protocol == "https", credential.host == "example.com"
    /// ```
    /// - Parameter input: The bytes git wrote on the helper's standard input.
    /// - Throws: ``HelperFailure`` for a line without `=` (the line itself is not
    ///   repeated: it could hold a secret), or a name that is not UTF-8 text.
    public init(parsing input: Data) throws(HelperFailure) {
        let bytes = [UInt8](input)
        var start = 0
        var lineNumber = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            lineNumber += 1
            let line = bytes[start..<end]
            start = end + 1
            if line.isEmpty { break }
            guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else {
                throw HelperFailure(
                    "keysmith: bad input on line \(lineNumber): expected key=value (the line is not shown, it may hold a secret).")
            }
            let key = String(decoding: line[line.startIndex..<equals], as: UTF8.self)
            let value = line[(equals + 1)...]
            // Names are UTF-8 text, compared byte for byte: a value that is not UTF-8 is
            // refused, never repaired into U+FFFD (which would make `tenant\xFF` and
            // `tenant\xFE` one item). The value is not repeated.
            func text() throws(HelperFailure) -> String {
                guard let text = String(validating: value, as: UTF8.self) else {
                    throw HelperFailure(
                        "keysmith: the \(key) on line \(lineNumber) is not UTF-8 text (it is not shown); keysmith stores "
                            + "names as UTF-8 and does not guess what other bytes mean.")
                }
                return text
            }
            switch key {
            case "protocol": self.protocol = try text()
            case "host": host = try text()
            case "path": path = try text()
            case "username": username = try text()
            case "password": password = Data(value)
            case "password_expiry_utc": passwordExpiryUTC = try text()
            case "oauth_refresh_token": oauthRefreshToken = Data(value)
            case "capability[]": capabilities.append(try text())
            case "state[]": state.append(try text())
            default: break  // wwwauth[], url and keys of later git versions: ignored, as git asks.
            }
        }
    }

    /// Overwrites the secret bytes and forgets them.
    public mutating func clear() {
        if var bytes = password {
            password = nil
            bytes.resetBytes(in: 0..<bytes.count)
        }
        if var bytes = oauthRefreshToken {
            oauthRefreshToken = nil
            bytes.resetBytes(in: 0..<bytes.count)
        }
    }
}
