/// The kind of place a key can come from.
///
/// Each kind has a different safety profile. The retriever orders its
/// sources by kind (see ``KeyRetriever/sourcePriority``), and ``KeyPolicy`` refuses to serve a
/// sensitive key from a kind that keeps keys in plaintext (``isPlaintext``).
///
/// | kind | safety | lifetime | good for | unsafe for |
/// |---|---|---|---|---|
/// | ``keychain`` | high: encrypted at rest | survives app updates | encryption keys, signing keys | (awkward to edit by hand while debugging) |
/// | ``configFile`` | low: plaintext in the bundle | ships with the app | non-sensitive API keys, environment flags | anything secret |
/// | ``environment`` | medium: process only | one process | debugging, CI | production (not settable on devices) |
/// | ``compiled`` | medium: obfuscated in the binary | ships with the binary | environment seeds, non-sensitive keys | anything secret (obfuscation is not secrecy) |
/// | ``remote`` | medium: server controlled | until rotated | keys rotated from a server | offline use (needs the network) |
public enum KeySourceKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The keychain (Keychain Services): encrypted at rest, the place for sensitive keys.
    case keychain
    /// A configuration file bundled with the app (plist or JSON): plaintext.
    case configFile
    /// The process environment (`ProcessInfo.environment`): plaintext, debugging and CI only.
    case environment
    /// Constants compiled into the binary by `keysmith generate`: obfuscated, not secret.
    case compiled
    /// A remote configuration service (for example etcd).
    case remote

    /// The default lookup order: most secure first, never the plaintext copy first.
    ///
    /// Keychain, then config file, then environment, then compiled constants, then remote.
    public static let defaultPriority: [KeySourceKind] = [.keychain, .configFile, .environment, .compiled, .remote]

    /// Whether keys of this kind are readable by anyone who has the app or the process
    /// (config files, environment variables, compiled constants).
    ///
    /// ``KeyPolicy`` never serves a sensitive key from a plaintext source in release builds.
    public var isPlaintext: Bool {
        switch self {
        case .keychain, .remote: return false
        case .configFile, .environment, .compiled: return true
        }
    }

    /// A readable name: `Keychain`, `ConfigFile`, `Environment`, `Compiled`, `Remote`.
    public var description: String {
        switch self {
        case .keychain: return "Keychain"
        case .configFile: return "ConfigFile"
        case .environment: return "Environment"
        case .compiled: return "Compiled"
        case .remote: return "Remote"
        }
    }
}
