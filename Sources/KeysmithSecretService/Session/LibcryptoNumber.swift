import COpenSSL

/// A libcrypto `BIGNUM` owned by Swift: cleared (`BN_clear_free`) when the last reference goes,
/// so a private exponent or a shared secret leaves no copy behind in the number's memory.
final class LibcryptoNumber {
    /// The `BIGNUM`.
    let number: OpaquePointer

    /// Zero, in libcrypto's secure heap when it has one, flagged for constant-time arithmetic.
    init() throws(SecretServiceError) {
        guard let number = BN_secure_new() else { throw LibcryptoFailure.error("allocating a number") }
        BN_set_flags(number, BN_FLG_CONSTTIME)
        self.number = number
    }

    /// The unsigned big-endian number `bytes` (leading zero bytes or not).
    convenience init(bigEndian bytes: [UInt8]) throws(SecretServiceError) {
        try self.init()
        let converted = bytes.withUnsafeBufferPointer { buffer in
            BN_bin2bn(buffer.baseAddress, Int32(buffer.count), number) != nil
        }
        guard converted else { throw LibcryptoFailure.error("reading a number") }
    }

    /// A small number.
    convenience init(_ word: UInt) throws(SecretServiceError) {
        try self.init()
        guard BN_set_word(number, word) == 1 else { throw LibcryptoFailure.error("setting a number") }
    }

    deinit {
        BN_clear_free(number)
    }

    /// How many bytes the number takes without leading zero bytes.
    var byteCount: Int { (Int(BN_num_bits(number)) + 7) / 8 }

    /// -1, 0 or 1 as this number is less than, equal to or greater than `other`.
    func compare(_ other: LibcryptoNumber) -> Int32 { BN_cmp(number, other.number) }

    /// The number big-endian in exactly `count` bytes, zero-padded on the left, written into
    /// `destination` (which must hold `count` bytes).
    func write(into destination: UnsafeMutableRawBufferPointer) throws(SecretServiceError) {
        let written = BN_bn2binpad(
            number, destination.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(destination.count))
        guard written == Int32(destination.count) else { throw LibcryptoFailure.error("writing a number") }
    }

    /// The number big-endian in exactly `count` bytes, zero-padded on the left. For public
    /// numbers only: the array is not zeroed when it goes.
    func publicBytes(count: Int) throws(SecretServiceError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let written = bytes.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(number, buffer.baseAddress, Int32(buffer.count))
        }
        guard written == Int32(count) else { throw LibcryptoFailure.error("writing a number") }
        return bytes
    }
}

/// The service's own failures inside libcrypto (out of memory, a missing algorithm): reported
/// without libcrypto's error text, which could name the data it was working on.
enum LibcryptoFailure {
    /// A `failed` error for `step`, after emptying libcrypto's error queue for this thread.
    static func error(_ step: String) -> SecretServiceError {
        ERR_clear_error()
        return .failed("the session's encryption failed inside libcrypto (\(step)); open a new session, or use the plain algorithm if this persists.")
    }
}
