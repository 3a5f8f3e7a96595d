import Foundation
import Keysmith

/// Which bus client read which item's secret, for `keysmith audit --secret-service`: one line
/// per read in `secret-service-reads.log` in the keychain directory (mode 0600). A line holds
/// the time, the client's process id and executable (best effort: from the bus and `/proc`),
/// the collection and the item's identifier (its object path element): never the secret, and
/// never the item's names (service, account, label, attributes), which the keychain keeps sealed;
/// `keysmith audit --secret-service` looks them up in the keychain when it shows the log.
/// The log keeps about 1 MiB of the latest reads, and one older file (`.1`).
///
/// Line format (tab-separated, text fields with `\`, tab and control bytes escaped as `\xHH`):
/// `TIME<TAB>PID<TAB>EXECUTABLE<TAB>COLLECTION<TAB>ITEM<TAB>METHOD`.
final class BusClientReadLog {
    /// The file's name in the keychain directory.
    static let fileName = "secret-service-reads.log"
    static let maximumBytes = 1 << 20

    let url: URL
    /// Process id and executable per unique bus name, asked once per client.
    private var clients: [String: (pid: Int32?, executable: String?)] = [:]

    init(directory: URL) {
        url = directory.appendingPathComponent(Self.fileName)
    }

    /// Forgets a client that left the bus.
    func forget(_ uniqueName: String) { clients[uniqueName] = nil }

    func record(call: BusCall, collection: any SecretCollection, item: ItemSummary) {
        let sender = call.sender
        let client: (pid: Int32?, executable: String?)
        if let known = clients[sender] {
            client = known
        } else {
            client = call.callerProcess()
            clients[sender] = client
        }
        let time = ISO8601DateFormatter().string(from: Date())
        let line = [
            time, client.pid.map(String.init) ?? "-", Self.escape(client.executable ?? "-"), Self.escape(collection.identifier),
            Self.escape(item.identifier), Self.escape(call.member),
        ].joined(separator: "\t") + "\n"
        append(Array(line.utf8))
    }

    private func append(_ bytes: [UInt8]) {
        let path = url.path
        var status = stat()
        if stat(path, &status) == 0, Int(status.st_size) + bytes.count > Self.maximumBytes {
            _ = rename(path, path + ".1")
        }
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// Escapes `\`, tab, newline and other control bytes as `\xHH`.
    static func escape(_ text: String) -> String {
        var escaped: [UInt8] = []
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7f || byte == UInt8(ascii: "\\") {
                escaped += Array(String(format: "\\x%02x", byte).utf8)
            } else {
                escaped.append(byte)
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }
}
