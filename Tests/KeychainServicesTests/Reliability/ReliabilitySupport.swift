import CSQLite
import Foundation
import KeychainServices
import Testing

/// How hard the reliability tests push: `make stress` sets KEYSMITH_STRESS=1.
enum StressLevel {
    static var isStress: Bool { ProcessInfo.processInfo.environment["KEYSMITH_STRESS"] == "1" }
    static func pick(fast: Int, stress: Int) -> Int { isStress ? stress : fast }
}

/// A finished or killed workload run: its acknowledged lines.
struct WorkloadRun {
    let status: Int32
    let reason: Process.TerminationReason
    let lines: [String]
    let errors: String
}

/// Runs `keychain-workload` on `keychain`. With `killAfter`, it is killed with SIGKILL that
/// many seconds after it acknowledged its first write (its first output line), so every
/// kill lands while it is writing, however slowly the machine starts it. `shellPrefix` runs
/// it through /bin/sh (e.g. "ulimit -f 200;"); `environment` adds variables.
func runWorkload(
    _ arguments: [String], keychain: TemporaryKeychain, killAfter: Double? = nil, shellPrefix: String? = nil,
    environment extra: [String: String] = [:]
) throws -> WorkloadRun {
    let process = Process()
    if let shellPrefix {
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        let command = ([workloadExecutable().path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        process.arguments = ["-c", "\(shellPrefix) exec \(command)"]
    } else {
        process.executableURL = workloadExecutable()
        process.arguments = arguments
    }
    var environment = ProcessInfo.processInfo.environment
    environment["KEYSMITH_HOME"] = keychain.directory.path
    environment["KEYSMITH_ACCESS_GROUPS"] = keychain.accessGroups.joined(separator: ",")
    environment.merge(extra) { $1 }
    process.environment = environment
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    // Drain both pipes while the process runs so it never blocks on a full pipe; the first
    // complete output line is signalled.
    let collected = PipeCollector()
    let group = DispatchGroup()
    for (pipe, isError) in [(output, false), (errors, true)] {
        group.enter()
        DispatchQueue.global().async {
            let handle = pipe.fileHandleForReading
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                collected.append(data, isError: isError)
            }
            collected.finish(isError: isError)
            group.leave()
        }
    }
    if let killAfter {
        // Not a synchronization sleep: the wait for the first line is a semaphore; the
        // random delay after it only picks the moment of the kill.
        _ = collected.firstLine.wait(timeout: .now() + 120)
        Thread.sleep(forTimeInterval: killAfter)
        kill(process.processIdentifier, SIGKILL)
    }
    process.waitUntilExit()
    group.wait()
    let text = String(decoding: collected.output, as: UTF8.self)
    // A line cut by the kill is not an acknowledgement.
    var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    if !text.hasSuffix("\n"), !lines.isEmpty { lines.removeLast() }
    return WorkloadRun(
        status: process.terminationStatus, reason: process.terminationReason, lines: lines,
        errors: String(decoding: collected.errors, as: UTF8.self))
}

final class PipeCollector: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var output = Data()
    private(set) var errors = Data()
    private var signalled = false
    /// Signalled once, when standard output holds a complete line or ends.
    let firstLine = DispatchSemaphore(value: 0)

    func append(_ data: Data, isError: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if isError {
            errors.append(data)
        } else {
            output.append(data)
            if !signalled, data.contains(UInt8(ascii: "\n")) {
                signalled = true
                firstLine.signal()
            }
        }
    }

    func finish(isError: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if !isError, !signalled {
            signalled = true
            firstLine.signal()
        }
    }
}

/// `PRAGMA integrity_check` on the keychain's database file, from outside the engine.
func integrityCheck(_ keychain: TemporaryKeychain) -> String {
    var handle: OpaquePointer?
    let path = keychain.directory.appendingPathComponent("keychain.db").path
    guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return "cannot open" }
    defer { sqlite3_close(handle) }
    sqlite3_busy_timeout(handle, 10_000)
    var statement: OpaquePointer?
    sqlite3_prepare_v2(handle, "PRAGMA integrity_check", -1, &statement, nil)
    defer { sqlite3_finalize(statement) }
    var results: [String] = []
    while sqlite3_step(statement) == SQLITE_ROW {
        results.append(String(cString: sqlite3_column_text(statement, 0)))
    }
    return results.joined(separator: "; ")
}

/// Every item of the workload's service, account → value.
func workloadItems() -> [String: Data] {
    var result: CFTypeRef?
    let query: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.workload",
        kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true, kSecReturnData as String: true,
    ]
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    guard status == errSecSuccess else { return [:] }
    var items: [String: Data] = [:]
    for item in (result as? [[String: Any]]) ?? [] {
        if let account = item[kSecAttrAccount as String] as? String, let data = item[kSecValueData as String] as? Data {
            items[account] = data
        }
    }
    return items
}

/// Every account of the workload's service, once per stored item (a duplicate shows twice).
func workloadAccounts() -> [String] {
    var result: CFTypeRef?
    let query: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.keysmith.workload",
        kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
    ]
    guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return [] }
    return ((result as? [[String: Any]]) ?? []).compactMap { $0[kSecAttrAccount as String] as? String }
}
