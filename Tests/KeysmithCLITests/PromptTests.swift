import Foundation
import Testing

/// `-w` as the last argument prompts on the terminal with echo off. Tested through a real
/// pseudo-terminal: the test reads the prompt and types on the primary side, and checks
/// that nothing typed is echoed back.
struct PromptTests {
    @Test func promptReadsTheSecretTwiceWithoutEcho() throws {
        let home = TemporaryHome()
        let session = try TerminalSession(["add-generic-password", "-s", "svc", "-a", "acct", "-w"], home: home)
        #expect(session.terminal.waitFor("password data for new item: "), "prompt: \(session.terminal.text)")
        session.terminal.type("typed-secret\r")
        #expect(session.terminal.waitFor("retype password for new item: "), "prompt: \(session.terminal.text)")
        session.terminal.type("typed-secret\r")
        let result = try session.finish()
        #expect(result.status == 0, "\(result)\n--- terminal\n\(session.terminal.text)")
        #expect(!session.terminal.text.contains("typed-secret"), "echo must be off: \(session.terminal.text)")
        #expect(!result.stdout.contains("typed-secret"))
        #expect(!result.stderr.contains("warning"), "a prompted secret is not a command-line secret")

        let found = try keysmith(["find-generic-password", "-s", "svc", "-a", "acct", "-w"], home: home)
        #expect(found.standardOutput == Data("typed-secret\n".utf8))
    }

    @Test func backspaceAndEraseEditTheTypedSecret() throws {
        let home = TemporaryHome()
        let session = try TerminalSession(["add-generic-password", "-s", "svc", "-a", "acct", "-U", "-w"], home: home)
        #expect(session.terminal.waitFor("password data for new item: "))
        session.terminal.type("wrong\u{15}righx\u{7F}t\r")  // Ctrl-U erases, Backspace drops one character
        #expect(session.terminal.waitFor("retype password for new item: "))
        session.terminal.type("right\r")
        let result = try session.finish()
        #expect(result.status == 0, "\(result)")
        let found = try keysmith(["find-generic-password", "-s", "svc", "-a", "acct", "-w"], home: home)
        #expect(found.stdout == "right\n")
    }

    @Test func differentSecretsAtThePromptStoreNothing() throws {
        let home = TemporaryHome()
        let session = try TerminalSession(["add-generic-password", "-s", "svc", "-a", "acct", "-w"], home: home)
        #expect(session.terminal.waitFor("password data for new item: "))
        session.terminal.type("first-typed-Qx41\r")
        #expect(session.terminal.waitFor("retype password for new item: "))
        session.terminal.type("second-typed-Zw93\r")
        let result = try session.finish()
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("differ"))
        // Neither typed secret is echoed or repeated, on any stream.
        for typed in ["first-typed-Qx41", "second-typed-Zw93"] {
            let shown = session.terminal.text.contains(typed) || result.stdout.contains(typed) || result.stderr.contains(typed)
            #expect(!shown, "a typed secret was shown")
        }
        let found = try keysmith(["find-generic-password", "-s", "svc", "-a", "acct"], home: home)
        #expect(found.status == 44)
    }

    @Test func controlCCancelsAndRestoresTheTerminal() throws {
        let home = TemporaryHome()
        let session = try TerminalSession(["add-internet-password", "-s", "host", "-a", "acct", "-w"], home: home)
        #expect(session.terminal.waitFor("password data for new item: "))
        session.terminal.type("abc\u{03}")
        let result = try session.finish()
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("cancelled"))
    }

    @Test func stdinFlagOnATerminalPromptsInsteadOfEchoing() throws {
        let home = TemporaryHome()
        let session = try TerminalSession(["add-generic-password", "-s", "svc", "-a", "acct", "--stdin"], home: home)
        #expect(session.terminal.waitFor("password data for new item: "))
        session.terminal.type("via-terminal\r")
        #expect(session.terminal.waitFor("retype password for new item: "))
        session.terminal.type("via-terminal\r")
        let result = try session.finish()
        #expect(result.status == 0, "\(result)")
        #expect(!session.terminal.text.contains("via-terminal"))
    }

    @Test func existingItemIsReportedBeforeThePrompt() throws {
        let home = TemporaryHome()
        try storeGenericPassword("first", service: "svc", account: "acct", home: home)
        let session = try TerminalSession(["add-generic-password", "-s", "svc", "-a", "acct", "-w"], home: home)
        let result = try session.finish()
        #expect(result.status == 45, "\(result)")
        #expect(result.stderr.contains("-U"))
        #expect(!session.terminal.text.contains("password data"), "no prompt for a secret that cannot be stored")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/setsid"), "needs setsid (util-linux)"))
    func promptWithoutATerminalFailsAndSuggestsStdin() throws {
        let home = TemporaryHome()
        // setsid: no controlling terminal, so /dev/tty cannot be opened either.
        let result = try keysmith(
            ["add-generic-password", "-s", "svc", "-a", "acct", "-w"], home: home, launcher: ["/usr/bin/setsid", "--wait"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("no terminal"))
        #expect(result.stderr.contains("--stdin"))
    }
}
