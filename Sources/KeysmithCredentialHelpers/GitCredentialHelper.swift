import Foundation
import KeychainServices

/// `git-credential-keysmith`: git's credential-helper protocol over the keychain.
///
/// Items are internet passwords keyed as git-credential-osxkeychain keys them on a Mac:
/// server, protocol (`htps`, `http`, ...), port, path and account, authentication type
/// `dflt`, the password as the data (with `password_expiry_utc` and `oauth_refresh_token`
/// appended on their own lines when git sends them). So
/// `keysmith find-internet-password -s HOST -a USER -w` prints what git stored.
///
/// - `get`: prints `username=` (when git did not name one) and `password=` for the item
///   with exactly git's protocol, host, port and path; nothing when there is none.
/// - `store`: adds the item, or replaces its password when it exists (one keychain call
///   each: never half an item).
/// - `erase`: deletes the items git names (protocol, host, port, path, and the user name
///   when given); when git passes the password, only items holding that password.
///
/// A port or path git does not send means "none": port 0 and an empty path, so a
/// credential for `https://host/` never answers for `https://host:8443/`, and with
/// `credential.useHttpPath` each repository path has its own item.
///
/// - Note: Protocols git-credential-osxkeychain does not store (anything but `https`,
///   `http`, `ftp`, `ftps`, `imap`, `imaps` and `smtp`) are ignored, so git asks the next
///   helper. A keychain failure exits 1 with the cause on standard error.
public enum GitCredentialHelper {
    /// The usage line.
    public static let usage = "usage: git credential-keysmith <get|store|erase>"

    /// The `state[]` value this helper hands git with a credential it found, so that git's
    /// `store` of that same credential does not rewrite it.
    static let seenState = "keysmith:seen=1"

    /// Runs one helper action.
    /// - Parameters:
    ///   - action: `get`, `store` or `erase` (git's first argument); others are ignored.
    ///   - input: What git wrote on standard input.
    /// - Returns: The output for git, a message and the exit status.
    public static func run(action: String?, input: Data) -> HelperResult {
        guard let action else { return HelperResult(standardError: usage, status: 1) }
        do throws(HelperFailure) {
            var credential = try GitCredential(parsing: input)
            defer { credential.clear() }
            switch action {
            case "get": return HelperResult(standardOutput: try get(credential))
            case "store": try store(credential)
            case "erase": try erase(credential)
            default: break  // Git asks helpers to ignore actions they do not know.
            }
            return HelperResult()
        } catch {
            return HelperResult(standardError: error.message, status: 1)
        }
    }

    // MARK: Actions

    static func get(_ credential: GitCredential) throws(HelperFailure) -> Data {
        guard let key = try GitItemKey(credential) else { return Data() }
        let items = try InternetPasswordKeychain.items(
            matching: key.query(account: credential.username), data: true, action: "read the credential")
        guard let item = items.first else { return Data() }
        var stored = InternetPasswordKeychain.data(item)
        defer { stored.resetBytes(in: 0..<stored.count) }
        var output = Data()
        // Git's format has one attribute per line: a value with a line break (or a NUL, or a
        // carriage return, which newer git versions also read as an end of line) would let a
        // stored user name or password write other attributes, such as another host. Git's own
        // helpers refuse to write such a value; so does this one (an item added by another tool
        // can hold anything).
        func refuseUnsafe(_ value: Data) throws(HelperFailure) {
            guard !value.contains(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") || $0 == 0 }) else {
                throw HelperFailure(
                    "keysmith: the stored credential for \(key.server) has a line break or NUL in its user name or "
                        + "password, which git's credential format cannot carry; nothing was returned (the value is "
                        + "not shown). Look at it with keysmith find-internet-password -s \(key.server), delete it with "
                        + "keysmith delete-internet-password, and let git store the credential again.")
            }
        }
        if credential.username == nil {
            let account = Data((InternetPasswordKeychain.string(item, kSecAttrAccount) ?? "").utf8)
            try refuseUnsafe(account)
            output.append(line("username", account))
        }
        // The password, then the lines osxkeychain appends to it (expiry, refresh token).
        var lines = stored.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        var password = Data(lines.isEmpty ? Data() : lines.removeFirst())
        defer { password.resetBytes(in: 0..<password.count) }
        try refuseUnsafe(password)
        output.append(line("password", password))
        for extra in lines {
            for key in ["password_expiry_utc=", "oauth_refresh_token="] where extra.starts(with: Data(key.utf8)) {
                try refuseUnsafe(Data(extra))
                output.append(extra)
                output.append(UInt8(ascii: "\n"))
            }
        }
        if credential.capabilities.contains("state") {
            output.append(line("capability[]", Data("state".utf8)))
            output.append(line("state[]", Data(seenState.utf8)))
        }
        return output
    }

    static func store(_ credential: GitCredential) throws(HelperFailure) {
        // Git hands back what this helper found: storing it again would change nothing.
        if credential.state.contains(seenState) { return }
        // Only complete credentials are stored, as git's own helpers do.
        guard let key = try GitItemKey(credential), let username = credential.username,
            let password = credential.password
        else { return }
        var data = password
        if let expiry = credential.passwordExpiryUTC {
            data.append(Data("\npassword_expiry_utc=\(expiry)".utf8))
        }
        if let token = credential.oauthRefreshToken {
            data.append(Data("\noauth_refresh_token=".utf8))
            data.append(token)
        }
        defer { data.resetBytes(in: 0..<data.count) }
        var attributes = key.query(account: username)
        attributes[kSecAttrLabel as String] = key.server
        attributes[kSecValueData as String] = data
        try InternetPasswordKeychain.addOrUpdate(
            attributes, existing: key.query(account: username),
            changes: [kSecValueData as String: data], action: "store the credential")
    }

    static func erase(_ credential: GitCredential) throws(HelperFailure) {
        guard let key = try GitItemKey(credential) else { return }
        let password = credential.password
        let items = try InternetPasswordKeychain.items(
            matching: key.query(account: credential.username), data: password != nil, action: "erase the credential")
        for item in items {
            if let password {
                var stored = InternetPasswordKeychain.data(item)
                defer { stored.resetBytes(in: 0..<stored.count) }
                // Compare the password alone, not the lines appended to it.
                let end = stored.firstIndex(of: UInt8(ascii: "\n")) ?? stored.endIndex
                guard ConstantTime.equal(stored[stored.startIndex..<end], password) else { continue }
            }
            try InternetPasswordKeychain.delete(exactly: item, action: "erase the credential")
        }
    }

    /// `key=value\n`.
    private static func line(_ key: String, _ value: Data) -> Data {
        var data = Data(key.utf8)
        data.append(UInt8(ascii: "="))
        data.append(value)
        data.append(UInt8(ascii: "\n"))
        return data
    }
}
