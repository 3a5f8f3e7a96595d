// The functions of include/keysmith.h. Each one checks its arguments, runs the call through
// the same layer the Swift SecureStore uses (KeychainStoreProvider, SecureStore) and reports
// a failure in the caller's keysmith_error. See keysmith.h for the contract of each.
import Foundation
import Keysmith
@_spi(Keysmith) import KeychainServices

/// Runs `body`, writing its failure into `report` (or clearing it) and returning the status.
private func run(_ report: UnsafeMutableRawPointer?, _ body: () throws(CFailure) -> Void) -> Int32 {
    do {
        try body()
        CFailure.clear(report)
        return errSecSuccess
    } catch {
        error.write(to: report)
        return error.status
    }
}

/// The store behind a handle, or a failure naming the argument.
private func store(_ handle: OpaquePointer?) throws(CFailure) -> CStore {
    guard let store = CStore.from(handle) else {
        throw .parameter("The store is NULL: open one with keysmith_store_open and pass it to every call.")
    }
    return store
}

/// A required, non-empty UTF-8 string argument.
private func text(_ pointer: UnsafePointer<CChar>?, _ name: String, allowEmpty: Bool = false) throws(CFailure) -> String {
    guard let pointer else { throw .parameter("The \(name) is NULL: pass a NUL-terminated UTF-8 string.") }
    guard let string = String(validatingCString: pointer) else {
        throw .parameter("The \(name) is not valid UTF-8: pass a NUL-terminated UTF-8 string.")
    }
    if string.isEmpty && !allowEmpty { throw .parameter("The \(name) is empty: pass a non-empty name.") }
    return string
}

/// The caller's value bytes, copied (the copy is zeroed by the caller of this function).
private func bytes(_ pointer: UnsafePointer<UInt8>?, _ length: Int) throws(CFailure) -> Data {
    guard length >= 0 else { throw .parameter("The value length \(length) is negative.") }
    if length == 0 { return Data() }
    guard let pointer else {
        throw .parameter("The value is NULL but its length is \(length): pass the value's bytes, or length 0.")
    }
    return Data(bytes: pointer, count: length)
}

/// Runs a keychain call, turning its error into a failure.
private func keychain<Result>(_ body: () throws(KeychainError) -> Result) throws(CFailure) -> Result {
    do {
        return try body()
    } catch {
        throw CFailure(error)
    }
}

/// Overwrites a `Data`'s bytes (when it is the only reference to them) before it goes.
private func wipe(_ data: inout Data) {
    let count = data.count
    if count > 0 { data.resetBytes(in: 0..<count) }
}

/// The version of the C interface, `KEYSMITH_ABI_VERSION`.
/// - Returns: 2 (`keysmith_get_nowait` came with 2).
@_cdecl("keysmith_abi_version")
public func keysmith_abi_version() -> Int32 { 2 }

/// `keysmith_store_open`: opens a store for an access group and an accessibility.
/// - Returns: The status.
@_cdecl("keysmith_store_open")
public func keysmith_store_open(
    _ accessGroup: UnsafePointer<CChar>?, _ accessibility: UnsafePointer<CChar>?,
    _ outStore: UnsafeMutablePointer<OpaquePointer?>?, _ report: UnsafeMutableRawPointer?
) -> Int32 {
    run(report) { () throws(CFailure) in
        guard let outStore else { throw .parameter("out_store is NULL: pass the address of a keysmith_store *.") }
        outStore.pointee = nil
        let group = accessGroup == nil ? nil : try text(accessGroup, "access group")
        var level = Accessibility.afterFirstUnlockThisDeviceOnly
        if accessibility != nil {
            let name = try text(accessibility, "accessibility")
            guard let chosen = Accessibility(rawValue: name) else {
                throw .parameter(
                    "The accessibility '\(name)' is unknown: use one of "
                        + Accessibility.allCases.map(\.rawValue).joined(separator: ", ") + ", or NULL for the default.")
            }
            level = chosen
        }
        let store = CStore(accessGroup: group, accessibility: level)
        outStore.pointee = OpaquePointer(Unmanaged.passRetained(store).toOpaque())
    }
}

/// `keysmith_store_close`: releases a store (NULL is fine).
@_cdecl("keysmith_store_close")
public func keysmith_store_close(_ handle: OpaquePointer?) {
    guard let handle else { return }
    Unmanaged<CStore>.fromOpaque(UnsafeRawPointer(handle)).release()
}

/// `keysmith_set`: stores a value, replacing the previous one.
/// - Returns: The status.
@_cdecl("keysmith_set")
public func keysmith_set(
    _ handle: OpaquePointer?, _ service: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?,
    _ value: UnsafePointer<UInt8>?, _ length: Int, _ report: UnsafeMutableRawPointer?
) -> Int32 {
    run(report) { () throws(CFailure) in
        let store = try store(handle)
        let service = try text(service, "service")
        let key = try text(key, "key")
        var data = try bytes(value, length)
        defer { wipe(&data) }
        try keychain { () throws(KeychainError) in
            try store.provider.setItem(data, key: key, service: service, protection: .standard)
        }
    }
}

/// Reads a value, or fails with `errSecItemNotFound`.
private func read(_ handle: OpaquePointer?, _ service: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?) throws(CFailure)
    -> Data
{
    let store = try store(handle)
    let service = try text(service, "service")
    let key = try text(key, "key")
    let data = try keychain { () throws(KeychainError) in
        try store.readStore(for: service).data(for: key, prompt: nil)
    }
    guard let data else { throw CFailure.notFound(service: service, key: key) }
    return data
}

/// `keysmith_get_nowait`: `keysmith_get`, answered only when that takes no waiting.
/// - Returns: The status; `KEYSMITH_WOULD_WAIT` when the read would wait (the keychain not
///   open yet, a lock or the database held, an item needing authentication, the keychain
///   locked), with nothing read.
@_cdecl("keysmith_get_nowait")
public func keysmith_get_nowait(
    _ handle: OpaquePointer?, _ service: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?,
    _ outValue: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ outLength: UnsafeMutablePointer<Int>?,
    _ report: UnsafeMutableRawPointer?
) -> Int32 {
    let status = KeychainWithoutWaiting.run { keysmith_get(handle, service, key, outValue, outLength, report) }
    // A locked keychain: the waiting call answers (after an unlock in progress, if any).
    guard status == KeychainWouldWaitStatus || status == errSecInteractionNotAllowed else { return status }
    CFailure.wouldWait.write(to: report)
    return CFailure.wouldWait.status
}

/// `keysmith_get`: reads a value into a library buffer (free it with `keysmith_free`).
/// - Returns: The status.
@_cdecl("keysmith_get")
public func keysmith_get(
    _ handle: OpaquePointer?, _ service: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?,
    _ outValue: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ outLength: UnsafeMutablePointer<Int>?,
    _ report: UnsafeMutableRawPointer?
) -> Int32 {
    run(report) { () throws(CFailure) in
        guard let outValue, let outLength else {
            throw .parameter("out_value or out_length is NULL: pass the addresses of a uint8_t * and a size_t.")
        }
        outValue.pointee = nil
        outLength.pointee = 0
        var data = try read(handle, service, key)
        defer { wipe(&data) }
        guard let buffer = CBuffer.copy(data) else { throw CFailure.outOfMemory }
        outValue.pointee = buffer
        outLength.pointee = data.count
    }
}

/// `keysmith_get_into`: reads a value into the caller's buffer.
/// - Returns: The status (`errSecBufferTooSmall` with the needed length when it does not fit).
@_cdecl("keysmith_get_into")
public func keysmith_get_into(
    _ handle: OpaquePointer?, _ service: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?,
    _ buffer: UnsafeMutableRawPointer?, _ capacity: Int, _ outLength: UnsafeMutablePointer<Int>?,
    _ report: UnsafeMutableRawPointer?
) -> Int32 {
    run(report) { () throws(CFailure) in
        guard let outLength else { throw .parameter("out_length is NULL: pass the address of a size_t.") }
        guard capacity >= 0 else { throw .parameter("The capacity \(capacity) is negative.") }
        if buffer == nil && capacity > 0 {
            throw .parameter("The buffer is NULL but its capacity is \(capacity): pass a buffer, or capacity 0 to ask for the length.")
        }
        outLength.pointee = 0
        var data = try read(handle, service, key)
        defer { wipe(&data) }
        outLength.pointee = data.count
        guard data.count <= capacity else {
            throw CFailure(
                status: errSecBufferTooSmall, code: "INVALID_VALUE",
                message: "The buffer holds \(capacity) bytes; the value needs \(data.count) (out_length). "
                    + "Pass a buffer at least that large, or use keysmith_get.")
        }
        if let buffer, !data.isEmpty {
            data.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
    }
}

/// `keysmith_contains`: whether an item exists (never reads the value).
/// - Returns: The status.
@_cdecl("keysmith_contains")
public func keysmith_contains(
    _ handle: OpaquePointer?, _ service: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?,
    _ outExists: UnsafeMutablePointer<Int32>?, _ report: UnsafeMutableRawPointer?
) -> Int32 {
    run(report) { () throws(CFailure) in
        guard let outExists else { throw .parameter("out_exists is NULL: pass the address of an int32_t.") }
        outExists.pointee = 0
        let store = try store(handle)
        let service = try text(service, "service")
        let key = try text(key, "key")
        let exists = try keychain { () throws(KeychainError) in try store.provider.containsItem(key: key, service: service) }
        outExists.pointee = exists ? 1 : 0
    }
}

/// `keysmith_remove`: removes an item (a missing one is success).
/// - Returns: The status.
@_cdecl("keysmith_remove")
public func keysmith_remove(
    _ handle: OpaquePointer?, _ service: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?,
    _ report: UnsafeMutableRawPointer?
) -> Int32 {
    run(report) { () throws(CFailure) in
        let store = try store(handle)
        let service = try text(service, "service")
        let key = try text(key, "key")
        try keychain { () throws(KeychainError) in try store.provider.removeItem(key: key, service: service) }
    }
}

/// Writes a string list into a `keysmith_string_list`.
private func writeList(_ strings: [String], to list: UnsafeMutableRawPointer) throws(CFailure) {
    let (items, ok) = CBuffer.list(strings)
    guard ok else { throw CFailure.outOfMemory }
    list.storeBytes(of: items, as: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?.self)
    (list + MemoryLayout<UnsafeMutableRawPointer?>.stride).storeBytes(of: strings.count, as: Int.self)
}

/// Empties a `keysmith_string_list` the caller passed.
private func clearList(_ list: UnsafeMutableRawPointer) {
    list.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
    (list + MemoryLayout<UnsafeMutableRawPointer?>.stride).storeBytes(of: 0, as: Int.self)
}

/// `keysmith_keys`: the keys of a service, sorted.
/// - Returns: The status.
@_cdecl("keysmith_keys")
public func keysmith_keys(
    _ handle: OpaquePointer?, _ service: UnsafePointer<CChar>?, _ outKeys: UnsafeMutableRawPointer?,
    _ report: UnsafeMutableRawPointer?
) -> Int32 {
    run(report) { () throws(CFailure) in
        guard let outKeys else { throw .parameter("out_keys is NULL: pass the address of a keysmith_string_list.") }
        clearList(outKeys)
        let store = try store(handle)
        let service = try text(service, "service")
        let keys = try keychain { () throws(KeychainError) in try store.provider.keys(service: service) }
        try writeList(keys, to: outKeys)
    }
}

/// `keysmith_remove_all`: removes every item of a service, and only of it.
/// - Returns: The status.
@_cdecl("keysmith_remove_all")
public func keysmith_remove_all(
    _ handle: OpaquePointer?, _ service: UnsafePointer<CChar>?, _ report: UnsafeMutableRawPointer?
) -> Int32 {
    run(report) { () throws(CFailure) in
        let store = try store(handle)
        let service = try text(service, "service")
        try keychain { () throws(KeychainError) in try store.provider.removeAll(service: service) }
    }
}

/// `keysmith_services`: the generic-password services that start with a prefix, sorted.
/// - Returns: The status.
@_cdecl("keysmith_services")
public func keysmith_services(
    _ handle: OpaquePointer?, _ prefix: UnsafePointer<CChar>?, _ outServices: UnsafeMutableRawPointer?,
    _ report: UnsafeMutableRawPointer?
) -> Int32 {
    run(report) { () throws(CFailure) in
        guard let outServices else {
            throw .parameter("out_services is NULL: pass the address of a keysmith_string_list.")
        }
        clearList(outServices)
        let store = try store(handle)
        let prefix = try text(prefix, "prefix", allowEmpty: true)
        let services = try keychain { () throws(KeychainError) in try store.provider.services(withPrefix: prefix) }
        try writeList(services, to: outServices)
    }
}

/// `keysmith_set_biometric_protected`: the Swift `SecureStore`'s `setBiometricProtected`.
/// - Returns: The status.
@_cdecl("keysmith_set_biometric_protected")
public func keysmith_set_biometric_protected(
    _ handle: OpaquePointer?, _ servicePrefix: UnsafePointer<CChar>?, _ namespaceName: UnsafePointer<CChar>?,
    _ key: UnsafePointer<CChar>?, _ value: UnsafePointer<UInt8>?, _ length: Int,
    _ outProtected: UnsafeMutablePointer<Int32>?, _ reason: UnsafeMutablePointer<CChar>?, _ reasonCapacity: Int,
    _ report: UnsafeMutableRawPointer?
) -> Int32 {
    run(report) { () throws(CFailure) in
        guard let outProtected else { throw .parameter("out_protected is NULL: pass the address of an int32_t.") }
        outProtected.pointee = 0
        if let reason, reasonCapacity > 0 { reason.pointee = 0 }
        let store = try store(handle)
        let prefix = try text(servicePrefix, "service prefix")
        let namespace = try text(namespaceName, "namespace")
        let key = try text(key, "key")
        var data = try bytes(value, length)
        defer { wipe(&data) }
        guard var string = String(data: data, encoding: .utf8) else {
            throw .parameter("The value is not UTF-8 text: a biometric-protected value is text (JSON for other values).")
        }
        defer { string = "" }
        do throws(SecureStoreError) {
            let result = try store.secureStore(servicePrefix: prefix)
                .setBiometricProtected(string, for: key, in: Namespace(namespace))
            switch result {
            case .protected:
                outProtected.pointee = 1
            case .fellBack(_, let why):
                if let reason, reasonCapacity > 0 {
                    CFailure.writeString(why, to: UnsafeMutableRawPointer(reason), capacity: reasonCapacity)
                }
            }
        } catch {
            throw CFailure(error)
        }
    }
}

/// `keysmith_migrate_service`: the Swift `SecureStore`'s `migrateService`, with a JSON report.
/// - Returns: The status.
@_cdecl("keysmith_migrate_service")
public func keysmith_migrate_service(
    _ handle: OpaquePointer?, _ oldService: UnsafePointer<CChar>?, _ servicePrefix: UnsafePointer<CChar>?,
    _ namespaceName: UnsafePointer<CChar>?, _ outReport: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ report: UnsafeMutableRawPointer?
) -> Int32 {
    run(report) { () throws(CFailure) in
        guard let outReport else { throw .parameter("out_report_json is NULL: pass the address of a char *.") }
        outReport.pointee = nil
        let store = try store(handle)
        let oldService = try text(oldService, "old service")
        let prefix = try text(servicePrefix, "service prefix")
        let namespace = try text(namespaceName, "namespace")
        let migration: MigrationReport
        do throws(SecureStoreError) {
            migration = try store.secureStore(servicePrefix: prefix).migrateService(from: oldService, to: Namespace(namespace))
        } catch {
            throw CFailure(error)
        }
        let object: [String: Any] = [
            "migrated": migration.migrated, "alreadyPresent": migration.alreadyPresent,
            "conflicts": migration.conflicts, "skipped": migration.skipped,
        ]
        guard var json = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
            throw CFailure(status: errSecInternalComponent, code: "UNKNOWN", message: "The migration report could not be written as JSON.")
        }
        json.append(0)
        guard let buffer = CBuffer.copy(json) else { throw CFailure.outOfMemory }
        outReport.pointee = buffer
    }
}

/// `keysmith_free`: zeroes and frees a buffer the library returned.
@_cdecl("keysmith_free")
public func keysmith_free(_ buffer: UnsafeMutableRawPointer?) {
    CBuffer.release(buffer)
}

/// `keysmith_debug_set_free_observer`: a test hook called by `keysmith_free` after zeroing.
@_cdecl("keysmith_debug_set_free_observer")
public func keysmith_debug_set_free_observer(
    _ observer: (@convention(c) (UnsafeRawPointer?, Int, UnsafeMutableRawPointer?) -> Void)?,
    _ context: UnsafeMutableRawPointer?
) {
    CBuffer.setObserver(observer, context: context)
}
