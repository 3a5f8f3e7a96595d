import Foundation
import KeychainServices

/// What went wrong with a fleet: each case says what happened (``description``) and what to
/// do (``recovery``). Never key bytes, never the etcd password or token.
public enum EtcdError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The configuration cannot work (no endpoint, a URL that is not http or https, an
    /// option this platform cannot honour).
    case invalidConfiguration(reason: String)
    /// A fleet key of the wrong size, or unreadable.
    case invalidFleetKey(reason: String)
    /// An identifier or version that cannot be part of an etcd key (empty, or with `/`).
    case invalidName(String, reason: String)
    /// No endpoint answered; `reasons` has one entry per endpoint tried.
    case unreachable(reasons: [String])
    /// An endpoint answered with an error (HTTP status, gRPC code and message).
    case server(endpoint: String, status: Int, code: Int?, message: String)
    /// etcd refused the username and password, or needs them and none were given.
    case authenticationFailed(endpoint: String, message: String)
    /// TLS refused the connection: the server's certificate is not signed by the CA, or not
    /// issued for the endpoint's host, or this machine's client certificate is missing,
    /// expired or refused. Never worked around (no other endpoint, no offline copy).
    case tlsFailed(endpoint: String, reason: String)
    /// A write may have reached etcd, which did not answer: whether it was applied is
    /// unknown (`operation` says which write).
    case outcomeUnknown(operation: String, reasons: [String])
    /// The value stored at `key` is not what this fleet sealed for this identifier and
    /// version: changed in etcd, moved from another name or version, or sealed under another
    /// fleet key. It is never served.
    case tampered(identifier: String, version: String, key: String, reason: String)
    /// The value at `key` names the fleet key that sealed it, and it is not this machine's:
    /// this machine has another fleet key than the one that sealed it. Never served; nothing
    /// in etcd is wrong for machines that hold `sealedWith`.
    case foreignFleetKey(identifier: String, version: String, key: String, sealedWith: String, thisMachine: String)
    /// A value in the older format (which does not name its fleet key) fails authentication
    /// with this machine's fleet key: it was changed in etcd, or sealed under another fleet
    /// key, and it cannot say which. Never served.
    case unopenable(identifier: String, version: String, key: String, thisMachine: String)
    /// `fleet init` on a prefix that already holds values: a new fleet key could not open
    /// them. Nothing was changed.
    case prefixInUse(prefix: String, values: Int, fleetKeys: [String])
    /// The values under the prefix are sealed under another fleet key than this machine's:
    /// publishing under this one would make the version unreadable for the fleet.
    case fleetKeyMismatch(prefix: String, thisMachine: String, prefixKeys: [String])
    /// `retire` of a version this machine cannot open (it may be good for machines with
    /// another fleet key); retiring it needs `force`.
    case retireRefused(identifier: String, version: String, reason: String)
    /// A value sealed in a newer format than this build reads.
    case unsupportedFormat(identifier: String, version: String, format: Int)
    /// The version already exists in etcd; versions are never overwritten.
    case versionExists(identifier: String, version: String)
    /// No such version in etcd (retire).
    case versionNotFound(identifier: String, version: String)
    /// etcd is unreachable and the offline copy is older than the maximum staleness.
    case offlineCopyTooOld(identifier: String, confirmed: Date, maximum: Duration, unreachable: String)
    /// This keychain has no fleet key (run `keysmith fleet init` or `join`).
    case noFleetKey(service: String)
    /// This keychain has no fleet settings (run `keysmith fleet init` or `join`).
    case noFleetSettings(service: String)
    /// A keychain call failed.
    case keychain(operation: String, status: OSStatus)
    /// A key file could not be read or written, or is malformed.
    case keyFile(path: String, reason: String)
    /// The passphrase does not open the key file (or the file was changed).
    case wrongPassphrase(path: String)

    /// What happened, one sentence.
    public var description: String {
        switch self {
        case .invalidConfiguration(let reason):
            return "invalid fleet configuration: \(reason)"
        case .invalidFleetKey(let reason):
            return "invalid fleet key: \(reason)"
        case .invalidName(let name, let reason):
            return "invalid fleet key name \"\(name)\": \(reason)"
        case .unreachable(let reasons):
            return "no etcd endpoint answered (\(reasons.joined(separator: "; ")))"
        case .server(let endpoint, let status, let code, let message):
            return "etcd at \(endpoint) answered HTTP \(status)\(code.map { ", code \($0)" } ?? ""): \(message)"
        case .authenticationFailed(let endpoint, let message):
            return "etcd at \(endpoint) refused the credentials: \(message)"
        case .tlsFailed(let endpoint, let reason):
            return "TLS connection to etcd at \(endpoint) refused: \(reason)"
        case .outcomeUnknown(let operation, let reasons):
            return "the outcome of \(operation) is unknown: etcd may have received the write but did not answer "
                + "(\(reasons.joined(separator: "; ")))"
        case .tampered(let identifier, let version, let key, let reason):
            return "refused fleet key \"\(identifier)\" version \(version): the value at etcd key \(key) \(reason); "
                + "it is never served"
        case .foreignFleetKey(let identifier, let version, let key, let sealedWith, let thisMachine):
            return "refused fleet key \"\(identifier)\" version \(version): the value at etcd key \(key) is sealed under "
                + "fleet key \(sealedWith), and this machine's fleet key is \(thisMachine); it is never served"
        case .unopenable(let identifier, let version, let key, let thisMachine):
            return "refused fleet key \"\(identifier)\" version \(version): the value at etcd key \(key) fails "
                + "authentication with this machine's fleet key \(thisMachine); it is in the older format that does not "
                + "name its fleet key, so it was either changed in etcd or sealed under another fleet key; it is never "
                + "served"
        case .prefixInUse(let prefix, let values, let fleetKeys):
            let keys = fleetKeys.isEmpty ? "" : " (sealed under fleet key \(fleetKeys.joined(separator: ", ")))"
            return "etcd prefix \(prefix) already holds \(values) fleet \(values == 1 ? "value" : "values")\(keys); a new "
                + "fleet key could not open them, so nothing was changed"
        case .fleetKeyMismatch(let prefix, let thisMachine, let prefixKeys):
            return "the values under etcd prefix \(prefix) are sealed under fleet key "
                + "\(prefixKeys.isEmpty ? "another than this machine's" : prefixKeys.joined(separator: ", ")), not this "
                + "machine's fleet key \(thisMachine): a version sealed here would not open on the fleet's machines, so "
                + "nothing was published"
        case .retireRefused(let identifier, let version, let reason):
            return "refused to retire version \(version) of \"\(identifier)\": this machine cannot open it (\(reason)), "
                + "so it may be good for machines with another fleet key; nothing was retired"
        case .unsupportedFormat(let identifier, let version, let format):
            return "fleet key \"\(identifier)\" version \(version) is sealed in format \(format), which this build "
                + "does not read"
        case .versionExists(let identifier, let version):
            return "version \(version) of fleet key \"\(identifier)\" already exists in etcd; versions are never "
                + "overwritten"
        case .versionNotFound(let identifier, let version):
            return "etcd holds no version \(version) of fleet key \"\(identifier)\""
        case .offlineCopyTooOld(let identifier, let confirmed, let maximum, let unreachable):
            return "etcd is unreachable (\(unreachable)) and the offline copy of \"\(identifier)\" was last "
                + "confirmed \(EtcdError.timestamp(confirmed)), older than the maximum staleness of "
                + "\(EtcdError.seconds(maximum))"
        case .noFleetKey(let service):
            return "this keychain has no fleet key (service \"\(service)\")"
        case .noFleetSettings(let service):
            return "this keychain has no fleet settings (service \"\(service)\")"
        case .keychain(let operation, let status):
            return "keychain \(operation) failed (OSStatus \(status))"
        case .keyFile(let path, let reason):
            return "fleet key file \(path): \(reason)"
        case .wrongPassphrase(let path):
            return "the passphrase does not open the fleet key file \(path) (wrong passphrase, or the file was changed)"
        }
    }

    /// What to do about it, one sentence.
    public var recovery: String {
        switch self {
        case .invalidConfiguration:
            return "change what the message names and store the settings again (keysmith fleet join --endpoints … "
                + "--prefix … --key FILE, with --cacert, --cert and --cert-key for TLS); endpoints look like "
                + "https://10.0.0.1:2379, a prefix like /keysmith/prod/."
        case .invalidFleetKey, .wrongPassphrase:
            return "export the key again on a machine of the fleet (keysmith fleet export-key FILE --stdin) and join "
                + "with that file and its passphrase."
        case .invalidName:
            return "use an identifier and a version without \"/\", such as api_key and 2024.07.01."
        case .unreachable:
            return "check that etcd runs and that the endpoints are right (etcdctl --endpoints URL endpoint health)."
        case .server:
            return "check the etcd cluster's health (etcdctl endpoint status) and try again."
        case .authenticationFailed:
            return "check the etcd username and password, and that the user may read and write the prefix."
        case .tlsFailed:
            return "check the TLS files of the fleet settings: --cacert must be the CA that signed etcd's "
                + "certificates, --cert and --cert-key a client certificate that CA signed and still valid, and each "
                + "endpoint's host a name the server's certificate is issued for (keysmith fleet join … --cacert "
                + "FILE --cert FILE --cert-key FILE stores new ones)."
        case .outcomeUnknown:
            return "once etcd answers, look with keysmith fleet list; running the same put again with the same bytes "
                + "is safe (it succeeds without change when the version already holds them)."
        case .tampered(let identifier, let version, _, _):
            // While the refused version is in etcd every lookup of the key refuses it: it has
            // to go before a new version can be read.
            return "retire the refused version (keysmith fleet retire \(identifier) --version \(version) --force), publish "
                + "the key again from a trusted machine under a new version (keysmith fleet put \(identifier) "
                + "--version NEW), and find out who can write to etcd."
        case .foreignFleetKey(_, _, _, let sealedWith, _):
            return "if the fleet uses fleet key \(sealedWith), join it with that key (keysmith fleet export-key FILE "
                + "--stdin on one of its machines, then keysmith fleet join --endpoints … --prefix … --key FILE "
                + "--replace-key here); nothing in etcd needs to change."
        case .unopenable(let identifier, let version, _, _):
            return "compare this machine's fleet key with the fleet's (keysmith fleet list shows it): if they differ, "
                + "join the fleet with its key (keysmith fleet join … --replace-key); only if they are the same was the "
                + "value changed in etcd: then retire it (keysmith fleet retire \(identifier) --version \(version) "
                + "--force) and put the key again under a new version."
        case .prefixInUse(let prefix, _, _):
            return "join that fleet instead (keysmith fleet export-key FILE --stdin on one of its machines, then "
                + "keysmith fleet join --endpoints … --prefix \(prefix) --key FILE here), or choose another prefix for "
                + "a new fleet."
        case .fleetKeyMismatch:
            return "join the fleet with its key (keysmith fleet export-key FILE --stdin on one of its machines, then "
                + "keysmith fleet join … --key FILE --replace-key here) before putting keys."
        case .retireRefused:
            return "if the fleet's machines open it, it is theirs and nothing needs retiring: join this machine to the "
                + "fleet with its key (keysmith fleet join … --replace-key); only if no machine's fleet key opens it "
                + "(it was changed in etcd), retire it with --force."
        case .unsupportedFormat:
            return "update Keysmith on this machine."
        case .versionExists:
            return "a rotation adds a new version: choose a higher one."
        case .versionNotFound:
            return "list the versions with keysmith fleet list."
        case .offlineCopyTooOld:
            return "bring etcd back (or fix the network), or raise the maximum staleness if a longer outage is "
                + "acceptable."
        case .noFleetKey, .noFleetSettings:
            return "create a fleet with keysmith fleet init, or join one with keysmith fleet join."
        case .keychain:
            return "check the keychain (keysmith dump-keychain) and run the command again."
        case .keyFile:
            return "check the path, and that the file is a fleet key file written by keysmith fleet export-key."
        }
    }

    /// `2026-12-01T03:00:00Z`.
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// `90 s`.
    static func seconds(_ duration: Duration) -> String {
        "\(duration.components.seconds) s"
    }
}
