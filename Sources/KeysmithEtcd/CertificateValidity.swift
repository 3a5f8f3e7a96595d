import Foundation

/// The validity period of the first certificate in a PEM file (X.509 `notBefore` and
/// `notAfter`), read so that an expired client certificate is named as the cause of a
/// refused connection rather than left to the server's TLS alert.
struct CertificateValidity: Sendable, Equatable {
    /// The certificate is not valid before this.
    let notBefore: Date
    /// The certificate is not valid after this.
    let notAfter: Date

    /// A PEM file that cannot be read.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Reads the first `CERTIFICATE` block of a PEM file.
    /// - Throws: ``Failure`` ("cannot be read", "is not a PEM certificate", …).
    static func read(pemFile path: String) throws -> CertificateValidity {
        guard let data = FileManager.default.contents(atPath: path) else { throw Failure(description: "cannot be read") }
        let text = String(decoding: data, as: UTF8.self)
        guard let begin = text.range(of: "-----BEGIN CERTIFICATE-----"),
            let end = text.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<text.endIndex)
        else { throw Failure(description: "is not a PEM certificate (no BEGIN CERTIFICATE block)") }
        let base64 = text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        guard let der = Data(base64Encoded: String(base64)) else {
            throw Failure(description: "has a CERTIFICATE block that is not base64")
        }
        guard let validity = parse(der: [UInt8](der)) else {
            throw Failure(description: "has a certificate whose validity cannot be read")
        }
        return validity
    }

    /// Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber,
    /// signature, issuer, validity SEQUENCE { notBefore, notAfter }, … }, … }.
    static func parse(der: [UInt8]) -> CertificateValidity? {
        var reader = DERReader(bytes: der, position: 0, end: der.count)
        guard var certificate = reader.enter(tag: 0x30), var tbs = certificate.enter(tag: 0x30) else { return nil }
        if tbs.peek == 0xA0 { guard tbs.skip() else { return nil } }
        // serialNumber, signature, issuer
        for _ in 0..<3 { guard tbs.skip() else { return nil } }
        guard var validity = tbs.enter(tag: 0x30), let notBefore = validity.time(), let notAfter = validity.time() else {
            return nil
        }
        return CertificateValidity(notBefore: notBefore, notAfter: notAfter)
    }

    /// A cursor over DER bytes.
    private struct DERReader {
        let bytes: [UInt8]
        var position: Int
        let end: Int

        var peek: UInt8? { position < end ? bytes[position] : nil }

        /// The tag, and the content's range, of the element at the cursor (which moves past it).
        mutating func element() -> (tag: UInt8, content: Range<Int>)? {
            guard position + 2 <= end else { return nil }
            let tag = bytes[position]
            var length = Int(bytes[position + 1])
            var start = position + 2
            if length & 0x80 != 0 {
                let count = length & 0x7f
                guard count >= 1, count <= 4, start + count <= end else { return nil }
                length = 0
                for index in 0..<count { length = length << 8 | Int(bytes[start + index]) }
                start += count
            }
            guard start + length <= end else { return nil }
            position = start + length
            return (tag, start..<(start + length))
        }

        mutating func skip() -> Bool { element() != nil }

        mutating func enter(tag: UInt8) -> DERReader? {
            guard let (found, content) = element(), found == tag else { return nil }
            return DERReader(bytes: bytes, position: content.lowerBound, end: content.upperBound)
        }

        /// A UTCTime (`YYMMDDHHMMSSZ`) or GeneralizedTime (`YYYYMMDDHHMMSSZ`).
        mutating func time() -> Date? {
            guard let (tag, content) = element(), tag == 0x17 || tag == 0x18 else { return nil }
            let text = String(decoding: bytes[content], as: UTF8.self)
            guard text.hasSuffix("Z") else { return nil }
            var digits = Array(text.dropLast())
            if tag == 0x17 {
                guard digits.count == 12, let year = Int(String(digits[0..<2])) else { return nil }
                digits = Array(String(year < 50 ? 2000 + year : 1900 + year)) + digits[2...]
            }
            guard digits.count == 14 else { return nil }
            func number(_ range: Range<Int>) -> Int? { Int(String(digits[range])) }
            guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
                let hour = number(8..<10), let minute = number(10..<12), let second = number(12..<14)
            else { return nil }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            return calendar.date(
                from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))
        }
    }
}
