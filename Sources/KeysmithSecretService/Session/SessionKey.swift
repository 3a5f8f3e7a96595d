import COpenSSL
import CSodium

/// The AES-128 key of one `dh-ietf1024-sha256-aes128-cbc-pkcs7` session, derived from the
/// Diffie-Hellman shared secret with HKDF-SHA256 (no salt, empty info) and zeroed when the last
/// session value holding it goes. The key bytes never leave this object: it encrypts and
/// decrypts (AES-128-CBC, PKCS#7 padding, through libcrypto's EVP interface) itself.
///
/// Sendable: the key is written once, in `init`, and only read after; every operation uses its
/// own libcrypto context.
final class SessionKey: @unchecked Sendable {
    /// The key's size in bytes (AES-128).
    static let byteCount = 16
    /// The AES block size, which is also the IV's size.
    static let blockSize = 16

    private let key: UnsafeMutableRawBufferPointer

    /// HKDF-SHA256 (RFC 5869) of `sharedSecret` with no salt (HashLen zero bytes) and empty info,
    /// to 16 bytes.
    init(derivingFrom sharedSecret: UnsafeRawBufferPointer) throws(SecretServiceError) {
        let key = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.byteCount, alignment: 16)
        key.initializeMemory(as: UInt8.self, repeating: 0)
        guard Self.hkdfSHA256(sharedSecret, into: key) else {
            sodium_memzero(key.baseAddress, key.count)
            key.deallocate()
            throw LibcryptoFailure.error("deriving the session key")
        }
        self.key = key
    }

    deinit {
        sodium_memzero(key.baseAddress, key.count)
        key.deallocate()
    }

    /// AES-128-CBC with PKCS#7 padding of `plaintext` under this key and `iv` (16 bytes).
    func encrypt(_ plaintext: [UInt8], iv: [UInt8]) throws(SecretServiceError) -> [UInt8] {
        precondition(iv.count == Self.blockSize, "an AES-CBC IV is 16 bytes")
        guard let context = EVP_CIPHER_CTX_new() else { throw LibcryptoFailure.error("allocating a cipher") }
        defer { EVP_CIPHER_CTX_free(context) }
        var ciphertext = [UInt8](repeating: 0, count: (plaintext.count / Self.blockSize + 1) * Self.blockSize)
        let length: Int? = ciphertext.withUnsafeMutableBufferPointer { output in
            plaintext.withUnsafeBufferPointer { input in
                iv.withUnsafeBufferPointer { iv in
                    guard EVP_EncryptInit_ex(
                        context, EVP_aes_128_cbc(), nil, key.baseAddress?.assumingMemoryBound(to: UInt8.self),
                        iv.baseAddress) == 1
                    else { return nil }
                    var written: Int32 = 0
                    var finalWritten: Int32 = 0
                    guard EVP_EncryptUpdate(context, output.baseAddress, &written, input.baseAddress, Int32(input.count)) == 1,
                        EVP_EncryptFinal_ex(context, output.baseAddress! + Int(written), &finalWritten) == 1
                    else { return nil }
                    return Int(written) + Int(finalWritten)
                }
            }
        }
        guard let length, length == ciphertext.count else { throw LibcryptoFailure.error("encrypting a secret") }
        return ciphertext
    }

    /// The plaintext of `ciphertext` (AES-128-CBC under this key and `iv`, PKCS#7 padding), or
    /// nil when it does not decrypt to correctly padded data (another key, a damaged value).
    /// The caller checks the lengths first: `iv` 16 bytes, `ciphertext` a non-empty multiple of 16.
    func decrypt(_ ciphertext: [UInt8], iv: [UInt8]) -> [UInt8]? {
        precondition(iv.count == Self.blockSize && !ciphertext.isEmpty && ciphertext.count % Self.blockSize == 0)
        guard let context = EVP_CIPHER_CTX_new() else {
            ERR_clear_error()
            return nil
        }
        defer { EVP_CIPHER_CTX_free(context) }
        // Room for a whole block more than the input, as EVP_DecryptUpdate may write.
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + Self.blockSize)
        let length: Int? = plaintext.withUnsafeMutableBufferPointer { output in
            ciphertext.withUnsafeBufferPointer { input in
                iv.withUnsafeBufferPointer { iv in
                    guard EVP_DecryptInit_ex(
                        context, EVP_aes_128_cbc(), nil, key.baseAddress?.assumingMemoryBound(to: UInt8.self),
                        iv.baseAddress) == 1
                    else { return nil }
                    var written: Int32 = 0
                    var finalWritten: Int32 = 0
                    guard EVP_DecryptUpdate(context, output.baseAddress, &written, input.baseAddress, Int32(input.count)) == 1,
                        EVP_DecryptFinal_ex(context, output.baseAddress! + Int(written), &finalWritten) == 1
                    else { return nil }
                    return Int(written) + Int(finalWritten)
                }
            }
        }
        guard let length else {
            // What was decrypted before the padding check failed may be a secret: zero it.
            plaintext.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
            ERR_clear_error()
            return nil
        }
        // Zero the padding and the spare block before they are dropped (the array keeps its storage).
        plaintext.withUnsafeMutableBytes { bytes in
            sodium_memzero(bytes.baseAddress! + length, bytes.count - length)
        }
        plaintext.removeSubrange(length...)
        return plaintext
    }

    /// HKDF-SHA256 through libcrypto's EVP_KDF "HKDF": extract and expand, no salt, no info.
    private static func hkdfSHA256(_ secret: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        guard let kdf = EVP_KDF_fetch(nil, "HKDF", nil) else { return false }
        defer { EVP_KDF_free(kdf) }
        guard let context = EVP_KDF_CTX_new(kdf) else { return false }
        defer { EVP_KDF_CTX_free(context) }
        return "digest".withCString { digestName in
            "key".withCString { keyName in
                "SHA256".withCString { sha256 in
                    let parameters = [
                        OSSL_PARAM_construct_utf8_string(digestName, UnsafeMutablePointer(mutating: sha256), 0),
                        OSSL_PARAM_construct_octet_string(keyName, UnsafeMutableRawPointer(mutating: secret.baseAddress), secret.count),
                        OSSL_PARAM_construct_end(),
                    ]
                    return parameters.withUnsafeBufferPointer { parameters in
                        EVP_KDF_derive(
                            context, output.baseAddress?.assumingMemoryBound(to: UInt8.self), output.count,
                            parameters.baseAddress) == 1
                    }
                }
            }
        }
    }
}
