#if !canImport(Security)
import Foundation

/// The identity of this machine, which ThisDeviceOnly items are bound to:
/// `$KEYSMITH_MACHINE_ID` when set, else the contents of `/etc/machine-id` (systemd's
/// random per-installation id), read when a keychain is opened.
enum MachineIdentity {
    /// The identity bytes, or a failure that says how to provide one.
    static func current(_ variables: [String: String] = ProcessVariables.named("KEYSMITH_MACHINE_ID")) throws -> Data {
        if let given = variables["KEYSMITH_MACHINE_ID"], !given.isEmpty {
            return Data(given.utf8)
        }
        for path in ["/etc/machine-id", "/var/lib/dbus/machine-id"] {
            if let text = try? String(contentsOfFile: path, encoding: .utf8) {
                let id = text.trimmingScalars(where: ProcessVariables.isWhitespaceOrNewline)
                if !id.isEmpty { return Data(id.utf8) }
            }
        }
        throw KeychainFailure(
            errSecNotAvailable, "This machine has no identity (/etc/machine-id is missing or empty), which ThisDeviceOnly items are bound to.",
            recovery: "Run systemd-machine-id-setup (or dbus-uuidgen --ensure=/etc/machine-id), or set KEYSMITH_MACHINE_ID to a stable random value.")
    }
}
#endif
