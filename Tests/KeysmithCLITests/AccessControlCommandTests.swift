import Foundation
import Testing

/// `add-generic-password --access-control` and `find-generic-password` of such an item: the
/// keychain passphrase is asked on the terminal (a real pseudo-terminal here) only when the
/// secret is read.
struct AccessControlCommandTests {
    static let fast = ["KEYSMITH_KDF_PROFILE": "fast"]
    static let hasSetsid = FileManager.default.isExecutableFile(atPath: "/usr/bin/setsid")

    /// A keychain with a passphrase and one item that needs the device passcode.
    private func protectedItem(_ home: TemporaryHome) throws {
        let created = try keysmith(["create", "--stdin"], home: home, standardInput: "open sesame\n", environment: Self.fast)
        #expect(created.status == 0, "\(created)")
        let added = try keysmith(
            ["add-generic-password", "-s", "bank", "-a", "pin", "--accessible", "always", "--access-control", "device-passcode", "--stdin"],
            home: home, standardInput: "4711")
        #expect(added.status == 0, "\(added)")
    }

    @Test func readingTheSecretAsksForThePassphraseOnTheTerminal() throws {
        let home = TemporaryHome()
        try protectedItem(home)
        // Its attributes read without a prompt.
        let attributes = try keysmith(["find-generic-password", "-s", "bank", "-a", "pin"], home: home)
        #expect(attributes.status == 0, "\(attributes)")
        #expect(!attributes.stdout.contains("4711"))

        let session = try TerminalSession(["find-generic-password", "-s", "bank", "-a", "pin", "-w"], home: home)
        #expect(session.terminal.waitFor("keysmith: show the secret of the generic password"), "prompt: \(session.terminal.text)")
        // The prompt says what to type, after the program's reason.
        #expect(session.terminal.waitFor("keychain passphrase for \(home.keychain.path)"), "prompt: \(session.terminal.text)")
        session.terminal.type("wrong\r")
        #expect(session.terminal.waitFor("Wrong passphrase; try again."), "prompt: \(session.terminal.text)")
        session.terminal.type("open sesame\r")
        let result = try session.finish()
        #expect(result.status == 0, "\(result)\n--- terminal\n\(session.terminal.text)")
        #expect(result.stdout == "4711\n")
        #expect(!session.terminal.text.contains("open sesame"), "echo must be off: \(session.terminal.text)")
        // The retry says so on a line of its own; the program's reason starts the next one.
        #expect(!session.terminal.text.contains("try again. keysmith:"), "prompt: \(session.terminal.text)")
    }

    @Test func cancellingThePromptReadsNothing() throws {
        let home = TemporaryHome()
        try protectedItem(home)
        let session = try TerminalSession(["find-generic-password", "-s", "bank", "-a", "pin", "-w"], home: home)
        #expect(session.terminal.waitFor("keysmith: show the secret"), "prompt: \(session.terminal.text)")
        session.terminal.type("\u{03}")  // Ctrl-C
        let result = try session.finish()
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("cancel"), "\(result)")
    }

    @Test(.enabled(if: hasSetsid, "needs setsid (util-linux)"))
    func withoutATerminalTheReadIsRefused() throws {
        let home = TemporaryHome()
        try protectedItem(home)
        let result = try keysmith(
            ["find-generic-password", "-s", "bank", "-a", "pin", "-w"], home: home, launcher: ["/usr/bin/setsid", "--wait"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("errSecInteractionNotAllowed"), "\(result)")
        // The fix names the way to answer without a terminal.
        let fix = try #require(result.stderr.split(separator: "\n").first { $0.contains("to fix:") }, "\(result)")
        #expect(fix.contains("KEYSMITH_ASKPASS"), "\(result)")
    }

    @Test(.enabled(if: hasSetsid, "needs setsid (util-linux)"))
    func aKeychainWithoutPassphraseHasNoPasscodeToAsk() throws {
        let home = TemporaryHome()
        let added = try keysmith(
            ["add-generic-password", "-s", "bank", "-a", "pin", "--access-control", "user-presence", "--stdin"],
            home: home, standardInput: "4711")
        #expect(added.status == 0, "\(added)")
        let result = try keysmith(
            ["find-generic-password", "-s", "bank", "-a", "pin", "-w"], home: home, launcher: ["/usr/bin/setsid", "--wait"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.isEmpty)
        // No passphrase to ask for: the login password (PAM) where the machine has a PAM
        // service for it, which cannot ask without a terminal; else nothing can ask (and the
        // advice is to set a passphrase).
        #expect(result.stderr.contains("errSecAuthFailed") || result.stderr.contains("errSecInteractionNotAllowed"), "\(result)")
    }

    @Test func aWrongPasswordSaysWhichPasswordWasAsked() throws {
        let home = TemporaryHome()
        let added = try keysmith(
            ["add-generic-password", "-s", "bank", "-a", "pin", "--access-control", "user-presence", "--stdin"],
            home: home, standardInput: "4711")
        #expect(added.status == 0, "\(added)")
        let askpass = home.url.appendingPathComponent("askpass")
        try Data("#!/bin/sh\nprintf 'not the password\\n'\n".utf8).write(to: askpass)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: askpass.path)
        let result = try keysmith(
            ["find-generic-password", "-s", "bank", "-a", "pin", "-w"], home: home,
            environment: ["KEYSMITH_ASKPASS": askpass.path])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("errSecAuthFailed"), "\(result)")
        // No keychain passphrase here: what was asked (if anything) is the login password.
        #expect(result.stderr.contains("login password"), "\(result)")
        #expect(result.stderr.contains("keysmith passwd"), "\(result)")
    }

    @Test func helpSaysWhatReadingAProtectedItemAsksFor() throws {
        let home = TemporaryHome()
        let general = try keysmith(["help"], home: home)
        #expect(general.stdout.contains("KEYSMITH_ASKPASS"), "\(general)")
        let find = try keysmith(["help", "find-generic-password"], home: home)
        #expect(find.stdout.contains("--access-control"), "\(find)")
        #expect(find.stdout.contains("KEYSMITH_ASKPASS"), "\(find)")
        let add = try keysmith(["help", "add-generic-password"], home: home)
        let flat = add.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(flat.contains("login password"), "\(add)")
    }

    @Test func badAccessControlOptionsAreUsageErrors() throws {
        let home = TemporaryHome()
        let unknown = try keysmith(
            ["add-generic-password", "-s", "a", "-a", "b", "--access-control", "face", "--stdin"], home: home, standardInput: "x")
        #expect(unknown.status == 2, "\(unknown)")
        #expect(unknown.stderr.contains("biometry-current-set"))
        let synced = try keysmith(
            ["add-generic-password", "-s", "a", "-a", "b", "--access-control", "biometry-any", "--sync", "--stdin"],
            home: home, standardInput: "x")
        #expect(synced.status == 2, "\(synced)")
        #expect(synced.stderr.contains("--sync"))
        let help = try keysmith(["help", "add-generic-password"], home: home)
        #expect(help.stdout.contains("--access-control"))
    }
}
