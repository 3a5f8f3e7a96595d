// keychain-workload: a small program that hammers a keychain through the public SecItem
// API, for the multi-process tests (contention, crash safety). It uses the keychain named
// by KEYSMITH_HOME and the groups in KEYSMITH_ACCESS_GROUPS, like any other program.
//
//   keychain-workload upsert PREFIX COUNT   update-or-add PREFIX-0..COUNT-1, read each back
//   keychain-workload shared KEY ROUNDS     repeatedly upsert one shared item and read it
//   keychain-workload ack-log PREFIX COUNT  add PREFIX-i, then print "ack i" (flushed)
//   keychain-workload churn PREFIX COUNT    add PREFIX-i ("add i"); after each even i, rotate
//                                           PREFIX-(i/2) to a second value ("upd i/2")
//   keychain-workload model NAME COUNT      random add/update/delete/read on keys shared by
//                                           every writer (shared-0..7), printing every
//                                           acknowledged write ("set KEY NAME-STEP", "del KEY")
//   keychain-workload residue NAME SIZE     add and update an item with SIZE-byte random
//                                           secrets; print how many copies of each a scan
//                                           of this process's memory finds afterwards
//   keychain-workload real-cost FILE 1      give the keychain a passphrase, add an item and
//                                           export the keychain to FILE, with the cost of a
//                                           real program (never the tests' fast setting)
//   keychain-workload application-password ACCOUNT 1
//                                           add an item protected by an application password
//   keychain-workload fill PREFIX COUNT     add 4 KiB items until the disk (or RLIMIT_FSIZE)
//                                           refuses; prints "refused STATUS" and exits 0
//                                           when the refusal was a clean status
//
// With KEYSMITH_WORKLOAD_GATE=PATH (a named pipe), the workload first creates PATH.ready.PID
// and opens that pipe for reading, which blocks until the test opens it for writing: every
// workload started that way then begins at the same moment.
//
// Exit status: 0 when every operation succeeded, 1 otherwise (the failure is on stderr).
import Foundation
import KeychainAuthentication
import KeychainServices

func fail(_ message: String) -> Never {
    // The keychain's own account of the last failure (never a secret), when there is one.
    let reason = KeychainDiagnostics.lastFailureDescription.map { " (\($0))" } ?? ""
    FileHandle.standardError.write(Data("keychain-workload: \(message)\(reason)\n".utf8))
    exit(1)
}

func query(_ account: String) -> [String: Any] {
    [
        kSecClass as String: kSecClassGenericPassword,
        kSecAttrService as String: "com.keysmith.workload",
        kSecAttrAccount as String: account,
    ]
}

func upsert(_ account: String, _ value: Data) -> OSStatus {
    // Another writer may add or delete the item between any two calls: update, else add,
    // and on a duplicate (someone added it first) start over, until one call settles it.
    for _ in 0..<1_000 {
        let status = SecItemUpdate(query(account) as CFDictionary, [kSecValueData as String: value] as CFDictionary)
        if status != errSecItemNotFound { return status }
        var add = query(account)
        add[kSecValueData as String] = value
        add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
        let added = SecItemAdd(add as CFDictionary, nil)
        if added != errSecDuplicateItem { return added }
    }
    return errSecDuplicateItem
}

func read(_ account: String) -> (OSStatus, Data?) {
    var lookup = query(account)
    lookup[kSecReturnData as String] = true
    var result: CFTypeRef?
    let status = SecItemCopyMatching(lookup as CFDictionary, &result)
    return (status, result as? Data)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func delete(_ account: String) -> OSStatus {
    SecItemDelete(query(account) as CFDictionary)
}

// A file-size limit (the "disk full" test) must surface as an error status, not a signal.
signal(SIGXFSZ, SIG_IGN)

let arguments = CommandLine.arguments
guard arguments.count == 4, let count = Int(arguments[3]) else {
    fail("usage: keychain-workload upsert|shared|ack-log NAME COUNT")
}
let name = arguments[2]
if let gate = ProcessInfo.processInfo.environment["KEYSMITH_WORKLOAD_GATE"] {
    // Says it is at the gate (GATE.ready.PID), then waits there.
    let ready = open("\(gate).ready.\(getpid())", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    if ready >= 0 { close(ready) }
    let fd = open(gate, O_RDONLY)
    guard fd >= 0 else { fail("cannot open the gate \(gate)") }
    close(fd)
}
switch arguments[1] {
case "upsert":
    for index in 0..<count {
        let account = "\(name)-\(index)"
        let value = Data("value-\(account)".utf8)
        let status = upsert(account, value)
        guard status == errSecSuccess else { fail("upsert \(account): status \(status)") }
        let (readStatus, data) = read(account)
        guard readStatus == errSecSuccess, data == value else { fail("read back \(account): status \(readStatus)") }
    }
case "shared":
    for round in 0..<count {
        let status = upsert(name, Data("round-\(round)".utf8))
        guard status == errSecSuccess else { fail("shared upsert: status \(status)") }
        let (readStatus, data) = read(name)
        guard readStatus == errSecSuccess, let data, String(decoding: data, as: UTF8.self).hasPrefix("round-") else {
            fail("shared read: status \(readStatus)")
        }
    }
case "ack-log":
    for index in 0..<count {
        var add = query("\(name)-\(index)")
        add[kSecValueData as String] = Data("value-\(name)-\(index)".utf8)
        add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
        let status = SecItemAdd(add as CFDictionary, nil)
        guard status == errSecSuccess else { fail("add \(name)-\(index): status \(status)") }
        FileHandle.standardOutput.write(Data("ack \(index)\n".utf8))
    }
case "churn":
    for index in 0..<count {
        let status = upsert("\(name)-\(index)", Data("v1-\(name)-\(index)".utf8))
        guard status == errSecSuccess else { fail("churn add: status \(status)") }
        say("add \(index)")
        if index % 2 == 0 {
            let rotated = index / 2
            let status = upsert("\(name)-\(rotated)", Data("v2-\(name)-\(rotated)".utf8))
            guard status == errSecSuccess else { fail("churn rotate: status \(status)") }
            say("upd \(rotated)")
        }
    }
case "model":
    var state = UInt64(abs(name.hashValue) | 1) ^ 0x9E37_79B9_7F4A_7C15
    func random(_ bound: Int) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(state % UInt64(bound))
    }
    for step in 0..<count {
        let account = "shared-\(random(8))"
        switch random(4) {
        case 0, 1:
            let value = "\(name)-\(step)"
            let status = upsert(account, Data(value.utf8))
            guard status == errSecSuccess else { fail("model upsert: status \(status)") }
            say("set \(account) \(value)")
        case 2:
            let status = delete(account)
            guard status == errSecSuccess || status == errSecItemNotFound else { fail("model delete: status \(status)") }
            say("del \(account)")
        default:
            let (status, _) = read(account)
            guard status == errSecSuccess || status == errSecItemNotFound else { fail("model read: status \(status)") }
        }
    }
case "residue":
    #if os(Linux)
    for line in observeResidue(size: count).lines { say(line) }
    #else
    fail("residue scans /proc/self/mem, which only Linux has")
    #endif
case "fill":
    let block = Data(repeating: 0x5A, count: 4096)
    for index in 0..<count {
        var add = query("\(name)-\(index)")
        add[kSecValueData as String] = block
        add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
        let status = SecItemAdd(add as CFDictionary, nil)
        if status != errSecSuccess {
            say("refused \(status)")
            let clean = [errSecDiskFull, errSecIO, errSecNotAvailable].contains(status)
            exit(clean ? 0 : 1)
        }
        say("ack \(index)")
    }
    say("never refused")
case "real-cost":
    do {
        try KeychainEnvironment.setPassphrase("keychain passphrase", old: nil)
        var add = query("exported")
        add[kSecValueData as String] = Data("exported".utf8)
        add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
        let status = SecItemAdd(add as CFDictionary, nil)
        guard status == errSecSuccess else { fail("add: status \(status)") }
        let exported = try KeychainArchive.export(passphrase: "archive passphrase")
        try exported.archive.write(to: URL(fileURLWithPath: name))
        try KeychainEnvironment.lock(evictingFirstUnlock: true)
    } catch {
        fail("\(error)")
    }
case "application-password":
    let context = LAContext()
    _ = context.setCredential(Data("application password".utf8), type: .applicationPassword)
    guard let control = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlock, .applicationPassword, nil) else {
        fail("no access control")
    }
    var add = query(name)
    add[kSecValueData as String] = Data("paid".utf8)
    add[kSecAttrAccessControl as String] = control
    add[kSecUseAuthenticationContext as String] = context
    let status = SecItemAdd(add as CFDictionary, nil)
    guard status == errSecSuccess else { fail("add: status \(status)") }
default:
    fail("unknown command \(arguments[1])")
}
