import Foundation

/// What a fleet stores in etcd for one version of a key: a small JSON envelope, never the
/// key itself.
///
/// ```json
/// {"keysmith":"fleet-value","format":1,"identifier":"api_key","version":"2024.07.01",
///  "created":"2026-12-01T03:00:00Z","nonce":"…24 bytes, base64…","ciphertext":"…base64…"}
/// ```
///
/// The ciphertext is XChaCha20-Poly1305 under the fleet key. Its associated data binds the
/// identifier and version *of the etcd key it is read from*
/// (`keysmith-fleet-value/1\0ID\0VERSION`), so a value copied to another name or version
/// fails to open, and so does a changed byte or a value sealed under another fleet key.
struct SealedValue: Sendable {
    /// The envelope format this build writes and reads.
    static let format = 1

    /// The identifier the envelope names.
    let identifier: String
    /// The version the envelope names.
    let version: String
    /// When it was sealed.
    let created: Date
    /// The 24-byte nonce.
    let nonce: Data
    /// Ciphertext and tag.
    let ciphertext: Data

    /// Seals `key` for `identifier` and `version`.
    static func seal(_ key: Data, identifier: String, version: String, fleetKey: FleetKey) throws -> SealedValue {
        let nonce = FleetCipher.randomBytes(FleetCipher.nonceLength)
        let ciphertext = try fleetKey.withUnsafeBytes { bytes in
            try FleetCipher.seal(
                key, key: bytes, nonce: nonce, associatedData: associatedData(identifier: identifier, version: version))
        }
        let created = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        return SealedValue(identifier: identifier, version: version, created: created, nonce: nonce, ciphertext: ciphertext)
    }

    /// The envelope's JSON bytes.
    func encoded() -> Data {
        let object: [String: Any] = [
            "keysmith": "fleet-value", "format": SealedValue.format, "identifier": identifier, "version": version,
            "created": EtcdError.timestamp(created), "nonce": nonce.base64EncodedString(),
            "ciphertext": ciphertext.base64EncodedString(),
        ]
        // Sorted keys: the same envelope always encodes to the same bytes.
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }

    /// Reads and opens the value stored at etcd key `key`, which names `identifier` and
    /// `version`.
    /// - Returns: The key bytes.
    /// - Throws: ``EtcdError/tampered(identifier:version:key:reason:)`` when the bytes are
    ///   not an envelope, name another identifier or version, or fail authentication;
    ///   ``EtcdError/unsupportedFormat(identifier:version:format:)`` for a newer format.
    static func open(
        _ value: Data, key: String, identifier: String, version: String, fleetKey: FleetKey
    ) throws -> Data {
        try parse(value, key: key, identifier: identifier, version: version).open(fleetKey)
    }

    /// An envelope read and checked, ready to open (parsing is most of the cost of a
    /// lookup, so the watch's memory keeps these).
    struct Parsed: Sendable {
        let key: String
        let identifier: String
        let version: String
        let nonce: Data
        let ciphertext: Data

        /// Opens the ciphertext.
        /// - Throws: ``EtcdError/tampered(identifier:version:key:reason:)`` when
        ///   authentication fails.
        func open(_ fleetKey: FleetKey) throws -> Data {
            let opened = fleetKey.withUnsafeBytes { bytes in
                FleetCipher.open(
                    ciphertext, key: bytes, nonce: nonce,
                    associatedData: SealedValue.associatedData(identifier: identifier, version: version))
            }
            guard let data = opened else {
                throw EtcdError.tampered(
                    identifier: identifier, version: version, key: key,
                    reason: "fails authentication: it was changed in etcd, or sealed under another fleet key (this "
                        + "machine's key is \(fleetKey.fingerprint))")
            }
            return data
        }
    }

    /// Reads and checks the envelope stored at etcd key `key` (format, names, sizes).
    /// - Throws: As ``open(_:key:identifier:version:fleetKey:)`` does, except for the
    ///   authentication, which ``Parsed/open(_:)`` checks.
    static func parse(_ value: Data, key: String, identifier: String, version: String) throws -> Parsed {
        func refuse(_ reason: String) -> EtcdError {
            .tampered(identifier: identifier, version: version, key: key, reason: reason)
        }
        guard let object = try? JSONSerialization.jsonObject(with: value) as? [String: Any],
            object["keysmith"] as? String == "fleet-value"
        else { throw refuse("is not a sealed fleet value (was it written by hand with etcdctl put?)") }
        guard let format = (object["format"] as? NSNumber)?.intValue else {
            throw refuse("has no format number")
        }
        guard format == SealedValue.format else {
            throw EtcdError.unsupportedFormat(identifier: identifier, version: version, format: format)
        }
        let named = (object["identifier"] as? String ?? "?", object["version"] as? String ?? "?")
        guard named.0 == identifier, named.1 == version else {
            throw refuse(
                "was sealed for \"\(named.0)\" version \(named.1): it was moved or copied from another name or version")
        }
        guard let nonce = (object["nonce"] as? String).flatMap({ Data(base64Encoded: $0) }),
            nonce.count == FleetCipher.nonceLength,
            let ciphertext = (object["ciphertext"] as? String).flatMap({ Data(base64Encoded: $0) }),
            ciphertext.count > FleetCipher.tagLength
        else { throw refuse("has a malformed nonce or ciphertext") }
        return Parsed(key: key, identifier: identifier, version: version, nonce: nonce, ciphertext: ciphertext)
    }

    /// `keysmith-fleet-value/1\0ID\0VERSION`.
    static func associatedData(identifier: String, version: String) -> Data {
        Data("keysmith-fleet-value/\(format)\u{0}\(identifier)\u{0}\(version)".utf8)
    }
}
