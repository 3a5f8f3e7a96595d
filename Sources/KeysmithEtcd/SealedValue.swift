import Foundation

/// What a fleet stores in etcd for one version of a key: a small JSON envelope, never the
/// key itself.
///
/// ```json
/// {"keysmith":"fleet-value","format":2,"identifier":"api_key","version":"2024.07.01",
///  "fleetKey":"3f9c…16 hex digits…","created":"2026-12-01T03:00:00Z",
///  "nonce":"…24 bytes, base64…","ciphertext":"…base64…"}
/// ```
///
/// The ciphertext is XChaCha20-Poly1305 under the fleet key. Its associated data binds the
/// identifier and version *of the etcd key it is read from* and the fingerprint of the fleet
/// key that sealed it (`keysmith-fleet-value/2\0ID\0VERSION\0FINGERPRINT`), so a value copied
/// to another name or version fails to open, so does a changed byte, and a value sealed under
/// another fleet key is told apart from a changed one: it names that key
/// (``EtcdError/foreignFleetKey(identifier:version:key:sealedWith:thisMachine:)``).
///
/// Format 1 (written before values named their fleet key; associated data
/// `keysmith-fleet-value/1\0ID\0VERSION`) is still read: it opens as before, and one that
/// fails cannot say which of the two happened
/// (``EtcdError/unopenable(identifier:version:key:thisMachine:)``).
struct SealedValue: Sendable {
    /// The envelope format this build writes.
    static let format = 2

    /// The identifier the envelope names.
    let identifier: String
    /// The version the envelope names.
    let version: String
    /// The fingerprint of the fleet key that sealed it.
    let fleetKey: String
    /// When it was sealed.
    let created: Date
    /// The 24-byte nonce.
    let nonce: Data
    /// Ciphertext and tag.
    let ciphertext: Data

    /// Seals `key` for `identifier` and `version`.
    static func seal(_ key: Data, identifier: String, version: String, fleetKey: FleetKey) throws -> SealedValue {
        let nonce = FleetCipher.randomBytes(FleetCipher.nonceLength)
        let associatedData = associatedData(
            format: format, identifier: identifier, version: version, fleetKey: fleetKey.fingerprint)
        let ciphertext = try fleetKey.withUnsafeBytes { bytes in
            try FleetCipher.seal(key, key: bytes, nonce: nonce, associatedData: associatedData)
        }
        let created = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        return SealedValue(
            identifier: identifier, version: version, fleetKey: fleetKey.fingerprint, created: created, nonce: nonce,
            ciphertext: ciphertext)
    }

    /// The envelope's JSON bytes.
    func encoded() -> Data {
        let object: [String: Any] = [
            "keysmith": "fleet-value", "format": SealedValue.format, "identifier": identifier, "version": version,
            "fleetKey": fleetKey, "created": EtcdError.timestamp(created), "nonce": nonce.base64EncodedString(),
            "ciphertext": ciphertext.base64EncodedString(),
        ]
        // Sorted keys: the same envelope always encodes to the same bytes.
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }

    /// Reads and opens the value stored at etcd key `key`, which names `identifier` and
    /// `version`.
    /// - Returns: The key bytes.
    /// - Throws: As ``Parsed/open(_:)`` and ``parse(_:key:identifier:version:)`` do.
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
        /// 1 or 2.
        let format: Int
        /// The fingerprint of the fleet key that sealed it (format 2), else `nil`.
        let sealedWith: String?
        let nonce: Data
        let ciphertext: Data

        /// Opens the ciphertext.
        /// - Throws: ``EtcdError/foreignFleetKey(identifier:version:key:sealedWith:thisMachine:)``
        ///   when it names another fleet key; ``EtcdError/tampered(identifier:version:key:reason:)``
        ///   when it names this one and fails authentication;
        ///   ``EtcdError/unopenable(identifier:version:key:thisMachine:)`` for a format 1 value
        ///   that fails authentication.
        func open(_ fleetKey: FleetKey) throws -> Data {
            if let sealedWith, sealedWith != fleetKey.fingerprint {
                throw EtcdError.foreignFleetKey(
                    identifier: identifier, version: version, key: key, sealedWith: sealedWith,
                    thisMachine: fleetKey.fingerprint)
            }
            let associatedData = SealedValue.associatedData(
                format: format, identifier: identifier, version: version, fleetKey: sealedWith)
            let opened = fleetKey.withUnsafeBytes { bytes in
                FleetCipher.open(ciphertext, key: bytes, nonce: nonce, associatedData: associatedData)
            }
            guard let data = opened else {
                if sealedWith == nil {
                    throw EtcdError.unopenable(
                        identifier: identifier, version: version, key: key, thisMachine: fleetKey.fingerprint)
                }
                throw EtcdError.tampered(
                    identifier: identifier, version: version, key: key,
                    reason: "fails authentication: it was changed in etcd (it names this machine's fleet key "
                        + "\(fleetKey.fingerprint), which does not open it)")
            }
            return data
        }
    }

    /// Reads and checks the envelope stored at etcd key `key` (format, names, sizes).
    /// - Throws: ``EtcdError/tampered(identifier:version:key:reason:)`` when the bytes are
    ///   not an envelope or name another identifier or version;
    ///   ``EtcdError/unsupportedFormat(identifier:version:format:)`` for a newer format.
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
        guard format == 1 || format == 2 else {
            throw EtcdError.unsupportedFormat(identifier: identifier, version: version, format: format)
        }
        let named = (object["identifier"] as? String ?? "?", object["version"] as? String ?? "?")
        guard named.0 == identifier, named.1 == version else {
            throw refuse(
                "was sealed for \"\(named.0)\" version \(named.1): it was moved or copied from another name or version")
        }
        var sealedWith: String?
        if format == 2 {
            guard let fingerprint = object["fleetKey"] as? String, fingerprint.utf8.count == 16,
                fingerprint.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
            else { throw refuse("does not name the fleet key that sealed it") }
            sealedWith = fingerprint
        }
        guard let nonce = (object["nonce"] as? String).flatMap({ Data(base64Encoded: $0) }),
            nonce.count == FleetCipher.nonceLength,
            let ciphertext = (object["ciphertext"] as? String).flatMap({ Data(base64Encoded: $0) }),
            ciphertext.count > FleetCipher.tagLength
        else { throw refuse("has a malformed nonce or ciphertext") }
        return Parsed(
            key: key, identifier: identifier, version: version, format: format, sealedWith: sealedWith, nonce: nonce,
            ciphertext: ciphertext)
    }

    /// `keysmith-fleet-value/2\0ID\0VERSION\0FINGERPRINT` (format 1: without the fingerprint).
    static func associatedData(format: Int, identifier: String, version: String, fleetKey: String?) -> Data {
        var text = "keysmith-fleet-value/\(format)\u{0}\(identifier)\u{0}\(version)"
        if format >= 2, let fleetKey { text += "\u{0}\(fleetKey)" }
        return Data(text.utf8)
    }
}
