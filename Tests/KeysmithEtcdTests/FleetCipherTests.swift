import Foundation
import Testing

@testable import KeysmithEtcd

#if canImport(CSodium)
    import CSodium
#endif

/// The sealing primitives, without etcd.
@Suite("Fleet sealing")
struct FleetCipherTests {
    #if canImport(CSodium)
        @Test("The Swift HChaCha20 used on Apple platforms matches libsodium's")
        func hChaCha20MatchesLibsodium() throws {
            for _ in 0..<32 {
                let key = FleetCipher.randomBytes(32)
                let input = FleetCipher.randomBytes(16)
                var expected = Data(count: 32)
                expected.withUnsafeMutableBytes { out in
                    input.withUnsafeBytes { i in
                        key.withUnsafeBytes { k in
                            _ = crypto_core_hchacha20(
                                out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                i.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                k.baseAddress!.assumingMemoryBound(to: UInt8.self), nil)
                        }
                    }
                }
                let ours = key.withUnsafeBytes { FleetCipher.hChaCha20(key: $0, input: input) }
                #expect(ours == expected)
            }
        }

        @Test("XChaCha20-Poly1305 equals HChaCha20 sub-key + ChaCha20-Poly1305 with the short nonce")
        func xChaChaConstruction() throws {
            let key = FleetCipher.randomBytes(32)
            let nonce = FleetCipher.randomBytes(24)
            let message = Data("fleet value".utf8)
            let ad = Data("ad".utf8)
            let sealed = try key.withUnsafeBytes { try FleetCipher.seal(message, key: $0, nonce: nonce, associatedData: ad) }
            // The construction Apple platforms use, with libsodium's IETF ChaCha20-Poly1305.
            let subkey = key.withUnsafeBytes { FleetCipher.hChaCha20(key: $0, input: nonce.prefix(16)) }
            let short = FleetCipher.shortNonce(nonce)
            var out = Data(count: message.count + 16)
            var written: UInt64 = 0
            out.withUnsafeMutableBytes { o in
                message.withUnsafeBytes { m in
                    ad.withUnsafeBytes { a in
                        short.withUnsafeBytes { n in
                            subkey.withUnsafeBytes { k in
                                _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                                    o.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
                                    m.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                                    a.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(a.count), nil,
                                    n.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                            }
                        }
                    }
                }
            }
            #expect(out == sealed)
        }
    #endif

    @Test("A sealed value opens only under its own identifier, version and fleet key")
    func sealedValueBinding() throws {
        let key = FleetKey.generate()
        let sealed = try SealedValue.seal(Data("secret".utf8), identifier: "api_key", version: "2", fleetKey: key)
        let encoded = sealed.encoded()
        #expect(!String(decoding: encoded, as: UTF8.self).contains("secret"))
        let opened = try SealedValue.open(encoded, key: "/p/api_key/2", identifier: "api_key", version: "2", fleetKey: key)
        #expect(opened == Data("secret".utf8))
        #expect(throws: EtcdError.self) {
            try SealedValue.open(encoded, key: "/p/api_key/3", identifier: "api_key", version: "3", fleetKey: key)
        }
        #expect(throws: EtcdError.self) {
            try SealedValue.open(encoded, key: "/p/api_key/2", identifier: "api_key", version: "2", fleetKey: .generate())
        }
    }

    @Test("The fleet key and credentials never show their bytes")
    func redaction() throws {
        let bytes = FleetCipher.randomBytes(32)
        let key = try FleetKey(bytes)
        var dumped = ""
        dump(key, to: &dumped)
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        for text in ["\(key)", String(reflecting: key), dumped] {
            #expect(!text.contains(hex) && !text.contains(bytes.base64EncodedString()))
        }
        let credentials = EtcdCredentials(username: "root", password: "p4ssw0rd")
        var dumpedCredentials = ""
        dump(credentials, to: &dumpedCredentials)
        #expect(!"\(credentials)".contains("p4ssw0rd") && !dumpedCredentials.contains("p4ssw0rd"))
        #expect(throws: EtcdError.self) { try FleetKey(Data(count: 16)) }
    }

    @Test("A configuration without endpoints, with a non-HTTP URL or an empty prefix is refused")
    func configurationValidation() throws {
        #expect(throws: EtcdError.self) { try EtcdConfiguration(endpoints: [String](), prefix: "/p/") }
        #expect(throws: EtcdError.self) { try EtcdConfiguration(endpoints: ["ftp://host:2379"], prefix: "/p/") }
        #expect(throws: EtcdError.self) { try EtcdConfiguration(endpoints: ["http://127.0.0.1:2379"], prefix: " ") }
        #expect(try EtcdConfiguration(endpoints: ["http://127.0.0.1:2379"], prefix: "/p").prefix == "/p/")
        // TLS files that cannot be read are refused, never silently ignored.
        #expect(throws: EtcdError.self) {
            try EtcdConfiguration(
                endpoints: [URL(string: "https://127.0.0.1:2379")!], prefix: "/p/", tls: EtcdTLSOptions(caFile: "/ca.pem"))
        }
    }
}
