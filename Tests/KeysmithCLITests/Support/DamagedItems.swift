import CSQLite
import Foundation
import Testing

/// Zeroes the ciphertext of the rows `condition` selects in a test home's keychain, as a disk
/// error would.
///
/// Keysmith notices at the next open that the item set is no longer what it last wrote
/// (rollback detection) and refuses the whole keychain until its owner accepts the change by
/// creating `keychain.anchor.reset`. With `accepted` (the default) the helper does that too,
/// so a test sees what follows: the damaged item itself fails to decrypt, the others read.
/// - Parameters:
///   - home: The test home.
///   - condition: An SQL condition on the `items` table.
///   - accepted: Whether the owner accepts the damaged database.
func damageItems(in home: TemporaryHome, where condition: String, accepted: Bool = true) {
    let path = home.keychain.appendingPathComponent("keychain.db").path
    var handle: OpaquePointer?
    #expect(sqlite3_open(path, &handle) == SQLITE_OK)
    defer { sqlite3_close(handle) }
    sqlite3_busy_timeout(handle, 5000)
    let sql = "UPDATE items SET ciphertext = zeroblob(length(ciphertext)) WHERE \(condition)"
    #expect(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK, "\(sql)")
    if accepted {
        let reset = home.keychain.appendingPathComponent("keychain.anchor.reset").path
        #expect(FileManager.default.createFile(atPath: reset, contents: Data()))
    }
}
