#if !canImport(Security)
import CSQLite
import Foundation

/// An SQLite failure: the result code (primary and extended), SQLite's message and the SQL
/// that failed. Bound values are never part of it: they are keychain secrets or their
/// keyed hashes.
struct DatabaseError: Error, CustomStringConvertible {
    /// The extended SQLite result code.
    let resultCode: Int32
    /// SQLite's own message, if it gave one.
    let message: String?
    /// The statement that failed, without its bound values.
    let sql: String?

    /// The primary result code (the low 8 bits of the extended one).
    var primaryResultCode: Int32 { resultCode & 0xFF }

    /// Whether another connection held the database (SQLITE_BUSY, SQLITE_LOCKED): waiting
    /// would have answered.
    var isBusy: Bool { primaryResultCode == SQLITE_BUSY || primaryResultCode == SQLITE_LOCKED }

    var description: String {
        var text = "SQLite error \(resultCode)"
        if let message { text += ": \(message)" }
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }

    /// The keychain status Apple's securityd reports for this SQLite code
    /// (`osstatus_for_s3e`).
    var osStatus: OSStatus {
        switch primaryResultCode {
        case SQLITE_CONSTRAINT: return errSecDuplicateItem
        case SQLITE_READONLY: return errSecReadOnly
        case SQLITE_MISMATCH: return errSecNoSuchAttr
        case SQLITE_NOMEM: return errSecAllocate
        case SQLITE_IOERR: return errSecIO
        case SQLITE_INTERNAL: return errSecInternalComponent
        case SQLITE_FULL: return errSecDiskFull
        case SQLITE_CORRUPT, SQLITE_NOTADB: return errSecDecode
        default: return errSecNotAvailable
        }
    }
}
#endif
