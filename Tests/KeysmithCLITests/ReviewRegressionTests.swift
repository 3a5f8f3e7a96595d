import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import KeysmithCLI
import Testing

/// Regressions found in review: deletes that match more than asked, secrets echoed in
/// usage errors, and the prompt's buffers.
struct DeleteMatchesOnlyWhatWasAskedTests {
    @Test func deleteWithAMissingAccountDoesNotDeleteEveryAccount() throws {
        let home = TemporaryHome()
        try storeGenericPassword("one", service: "svc", account: "alice", home: home)
        try storeGenericPassword("two", service: "svc", account: "bob", home: home)
        let refused = try keysmith(["delete-generic-password", "-s", "svc"], home: home)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("2 generic passwords match"), "\(refused)")
        #expect(refused.stderr.contains("--all"), "\(refused)")
        for account in ["alice", "bob"] {
            let kept = try keysmith(["find-generic-password", "-s", "svc", "-a", account], home: home)
            #expect(kept.status == 0, "\(account) must survive: \(kept)")
        }
        // Naming one item deletes exactly that one.
        let one = try keysmith(["delete-generic-password", "-s", "svc", "-a", "alice"], home: home)
        #expect(one.status == 0, "\(one)")
        #expect(try keysmith(["find-generic-password", "-s", "svc", "-a", "bob"], home: home).status == 0)
        // --all deletes every match.
        try storeGenericPassword("three", service: "svc", account: "carol", home: home)
        let all = try keysmith(["delete-generic-password", "-s", "svc", "--all", "--json"], home: home)
        #expect(all.status == 0, "\(all)")
        #expect(try all.json()["deleted"] as? Int == 2)
        #expect(try keysmith(["find-generic-password", "-s", "svc"], home: home).status == 44)
    }

    @Test func deleteInternetPasswordWithoutPortDoesNotDeleteEveryPort() throws {
        let home = TemporaryHome()
        for port in ["443", "8443"] {
            let added = try keysmith(
                ["add-internet-password", "-s", "git.example.com", "-r", "https", "-P", port, "-a", "ci", "--stdin"],
                home: home, standardInput: "p\(port)")
            #expect(added.status == 0, "\(added)")
        }
        let refused = try keysmith(["delete-internet-password", "-s", "git.example.com", "-a", "ci"], home: home)
        #expect(refused.status == 1, "\(refused)")
        for port in ["443", "8443"] {
            let kept = try keysmith(["find-internet-password", "-s", "git.example.com", "-P", port, "-w"], home: home)
            #expect(kept.stdout == "p\(port)\n", "port \(port) must survive: \(kept)")
        }
        let one = try keysmith(["delete-internet-password", "-s", "git.example.com", "-a", "ci", "-P", "443"], home: home)
        #expect(one.status == 0, "\(one)")
        #expect(try keysmith(["find-internet-password", "-s", "git.example.com", "-P", "8443"], home: home).status == 0)
    }
}

/// A stray argument of a command that takes a secret is not echoed in the usage error.
struct StrayArgumentIsNotEchoedTests {
    @Test(arguments: [
        ["add-generic-password", "-s", "svc", "-a", "acct", "-w", "--", "-Canary-7f3e9"],
        ["add-generic-password", "-s", "svc", "-a", "acct", "Canary-7f3e9"],
        ["add-internet-password", "-s", "host", "-a", "acct", "--stdin", "Canary-7f3e9"],
        ["rotate", "api_key", "--stdin", "--version", "2", "Canary-7f3e9"],
    ])
    func strayArgumentIsNotEchoed(_ arguments: [String]) throws {
        let home = TemporaryHome()
        let result = try keysmith(arguments, home: home, standardInput: "x")
        #expect(result.status == 2, "\(arguments)")
        #expect(result.stderr.contains("usage: keysmith"), "the usage line is printed")
        let echoed = result.stderr.contains("Canary-7f3e9") || result.stdout.contains("Canary-7f3e9")
        #expect(!echoed, "a stray argument of \(arguments[0]) may be a secret and is never echoed")
    }
}

/// The buffers a typed or piped secret passes through are zeroed after use.
struct SecretBufferZeroingTests {
    @Test func promptLineZeroesErasedCharactersAndTheLineAtTheEnd() {
        var line = PromptLine()
        for byte in Array("wrong".utf8) { #expect(line.feed(byte) == .more) }
        #expect(line.feed(0x15) == .more)  // Ctrl-U
        #expect(line.typed.storage.allSatisfy { $0 == 0 }, "Ctrl-U leaves no typed byte behind")
        for byte in Array("righé".utf8) { #expect(line.feed(byte) == .more) }
        #expect(line.feed(0x7F) == .more)  // Backspace drops "é" (two bytes)
        #expect(line.typed.storage[4...].allSatisfy { $0 == 0 }, "Backspace zeroes the erased bytes")
        #expect(line.feed(UInt8(ascii: "t")) == .more)
        #expect(line.feed(0x0D) == .done)
        #expect(line.data() == Data("right".utf8))
        line.wipe()
        #expect(line.typed.storage.allSatisfy { $0 == 0 })
        #expect(line.isEmpty)
    }

    @Test func promptLineCancelsOnControlCAndOnControlDWhenEmpty() {
        var line = PromptLine()
        #expect(line.feed(0x04) == .cancelled)
        #expect(line.feed(UInt8(ascii: "a")) == .more)
        #expect(line.feed(0x04) == .more)
        #expect(line.feed(0x03) == .cancelled)
    }

    @Test func secretBytesKeepTheirContentWhenTheyGrowAndWipeEverything() {
        var bytes = SecretBytes(capacity: 16)
        for _ in 0..<16 { bytes.append(0x41) }
        bytes.append(0x42)  // grows: the old storage is zeroed before it is released
        #expect(bytes.count == 17)
        #expect(Array(bytes.bytes) == Array(repeating: 0x41, count: 16) + [0x42])
        #expect(bytes.popLast() == 0x42)
        #expect(bytes.storage[16] == 0, "a removed byte is zeroed")
        bytes.wipe()
        #expect(bytes.isEmpty)
        #expect(bytes.storage.allSatisfy { $0 == 0 })
    }

    @Test func standardInputScratchBufferIsZeroedAfterReading() throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let secret = Array("piped-secret-\u{1}\n".utf8)
        #expect(secret.withUnsafeBytes { write(descriptors[1], $0.baseAddress!, $0.count) } == secret.count)
        close(descriptors[1])
        defer { close(descriptors[0]) }
        var scratch = [UInt8](repeating: 0, count: 5)  // smaller than the input: several reads
        let read = SecretInput.readToEnd(descriptors[0], scratch: &scratch)
        #expect(read == Data(secret))
        #expect(scratch.allSatisfy { $0 == 0 }, "the chunk buffer holds no secret bytes after reading")
    }
}
