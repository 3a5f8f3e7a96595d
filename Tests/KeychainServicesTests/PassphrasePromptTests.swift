#if !canImport(Security)
import Foundation
import Testing

@testable import KeychainServices

#if canImport(Glibc)
import Glibc
#endif

/// The secret prompt: on a terminal (a pseudo-terminal played by the test) and through an
/// askpass program.
@Suite(.serialized)
struct PassphrasePromptTests {
    typealias Outcome = Swift.Result<[UInt8], AuthenticationFailure>

    static func bytes(_ secret: SecretKey) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

    static func run(_ prompt: PassphrasePrompt, _ text: String, interactionAllowed: Bool = true) -> BlockingCall<Outcome> {
        BlockingCall {
            do throws(AuthenticationFailure) {
                return .success(bytes(try prompt.read(prompt: text, interactionAllowed: interactionAllowed)))
            } catch {
                return .failure(error)
            }
        }
    }

    // MARK: Terminal

    @Test func terminalPromptShowsTheReasonReadsWithoutEchoAndRestoresTheMode() throws {
        let terminal = try PseudoTerminal()
        let modesBefore = terminal.localModes
        #expect(modesBefore & tcflag_t(ECHO) != 0)
        let call = Self.run(PassphrasePrompt(environment: [:], terminalPath: terminal.devicePath), "Unlock the payment PIN\nPassphrase: ")
        terminal.readShown(until: "Passphrase: ")
        #expect(terminal.everythingShown.contains("Unlock the payment PIN"))
        // While the prompt waits, echo is off.
        #expect(terminal.localModes & tcflag_t(ECHO) == 0)
        terminal.type(Array("correct horsx".utf8) + [0x7F] + Array("e\r".utf8))
        let outcome = call.value()
        #expect(try outcome?.get() == Array("correct horse".utf8))
        terminal.readShown(until: "\n")
        #expect(!terminal.everythingShown.contains("horse"))
        #expect(!terminal.everythingShown.contains("hors"))
        #expect(terminal.localModes == modesBefore)
    }

    @Test func controlUErasesWhatWasTyped() throws {
        let terminal = try PseudoTerminal()
        let call = Self.run(PassphrasePrompt(environment: [:], terminalPath: terminal.devicePath), "Passphrase: ")
        terminal.readShown(until: "Passphrase: ")
        terminal.type(Array("wrong".utf8) + [0x15] + Array("right\n".utf8))
        #expect(try call.value()?.get() == Array("right".utf8))
    }

    @Test func enterAloneIsAnEmptySecretNotACancel() throws {
        let terminal = try PseudoTerminal()
        let call = Self.run(PassphrasePrompt(environment: [:], terminalPath: terminal.devicePath), "Passphrase: ")
        terminal.readShown(until: "Passphrase: ")
        terminal.type([0x0D])
        #expect(try call.value()?.get() == [])
    }

    @Test(arguments: [("end of input (Ctrl-D)", [UInt8(0x04)]), ("Ctrl-C", Array("half".utf8) + [0x03])])
    func endOfInputAndControlCCancel(_ what: String, _ keys: [UInt8]) throws {
        let terminal = try PseudoTerminal()
        let modesBefore = terminal.localModes
        let call = Self.run(PassphrasePrompt(environment: [:], terminalPath: terminal.devicePath), "Passphrase: ")
        terminal.readShown(until: "Passphrase: ")
        terminal.type(keys)
        let outcome = call.value()
        #expect(outcome.map { if case .failure(.userCancel) = $0 { true } else { false } } == true, "\(what)")
        #expect(terminal.localModes == modesBefore)
    }

    @Test func aSignalDuringThePromptRestoresTheTerminalAndCancels() throws {
        let terminal = try PseudoTerminal()
        let modesBefore = terminal.localModes
        // The process's own SIGHUP handler, here one that does nothing, runs after the prompt
        // has put the terminal back (the prompt sends the signal to the process again). It is
        // left installed: that resent signal may wait for a thread that accepts it.
        var doingNothing = sigaction()
        doingNothing.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&doingNothing.sa_mask)
        sigaction(SIGHUP, &doingNothing, nil)

        let call = Self.run(PassphrasePrompt(environment: [:], terminalPath: terminal.devicePath), "Passphrase: ")
        terminal.readShown(until: "Passphrase: ")
        #expect(terminal.localModes & tcflag_t(ECHO) == 0)
        // The signal lands on another thread than the prompt's (which, started from a Swift
        // concurrency thread, blocks SIGHUP), as a `kill` from outside usually does.
        let sender = BlockingCall<Int32> {
            var hangup = sigset_t()
            sigemptyset(&hangup)
            sigaddset(&hangup, SIGHUP)
            pthread_sigmask(SIG_UNBLOCK, &hangup, nil)
            return pthread_kill(pthread_self(), SIGHUP)
        }
        #expect(sender.value() == 0)
        let outcome = call.value()
        #expect(outcome.map { if case .failure(.systemCancel) = $0 { true } else { false } } == true)
        #expect(terminal.localModes == modesBefore)
    }

    @Test func noTerminalAndNoAskpassIsNotInteractive() {
        let prompt = PassphrasePrompt(environment: [:], terminalPath: "/nonexistent/tty")
        #expect(throws: AuthenticationFailure.notInteractive) { try prompt.read(prompt: "Passphrase: ", interactionAllowed: true) }
        let notATerminal = PassphrasePrompt(environment: [:], terminalPath: "/dev/null")
        #expect(throws: AuthenticationFailure.notInteractive) { try notATerminal.read(prompt: "Passphrase: ", interactionAllowed: true) }
    }

    @Test func notInteractiveSaysHowToGetAPrompt() {
        let text = AuthenticationFailure.notInteractive.description
        #expect(text.contains("no terminal"))
        #expect(text.contains("KEYSMITH_ASKPASS"))
    }

    @Test func interactionNotAllowedShowsNothing() throws {
        let terminal = try PseudoTerminal()
        let scripts = try AskpassScripts()
        defer { scripts.remove() }
        let askpass = try scripts.make("printf 'x\\n'; touch \(scripts.directory.path)/ran")
        for prompt in [
            PassphrasePrompt(environment: [:], terminalPath: terminal.devicePath),
            PassphrasePrompt(environment: ["KEYSMITH_ASKPASS": askpass], terminalPath: terminal.devicePath),
        ] {
            #expect(throws: AuthenticationFailure.notInteractive) { try prompt.read(prompt: "Passphrase: ", interactionAllowed: false) }
        }
        #expect(!FileManager.default.fileExists(atPath: scripts.directory.path + "/ran"))
        #expect(terminal.localModes & tcflag_t(ECHO) != 0)
    }

    // MARK: Askpass

    @Test func askpassGetsThePromptAndItsOutputIsTheSecretWithoutTheNewline() throws {
        let scripts = try AskpassScripts()
        defer { scripts.remove() }
        let askpass = try scripts.make("printf '%s' \"$1\" > \(scripts.directory.path)/prompt; printf 'open sesame\\n'")
        let prompt = PassphrasePrompt(environment: ["KEYSMITH_ASKPASS": askpass], terminalPath: "/nonexistent/tty")
        let secret = try prompt.read(prompt: "Read the refresh token\nPassword: ", interactionAllowed: true)
        #expect(Self.bytes(secret) == Array("open sesame".utf8))
        #expect(try String(contentsOfFile: scripts.directory.path + "/prompt", encoding: .utf8) == "Read the refresh token\nPassword: ")
    }

    @Test func askpassIsPreferredOverTheTerminalAndOnlyOneNewlineIsStripped() throws {
        let terminal = try PseudoTerminal()
        let scripts = try AskpassScripts()
        defer { scripts.remove() }
        let askpass = try scripts.make("printf 'ends with a blank line\\n\\n'")
        let prompt = PassphrasePrompt(environment: ["KEYSMITH_ASKPASS": askpass], terminalPath: terminal.devicePath)
        let secret = try prompt.read(prompt: "Password: ", interactionAllowed: true)
        #expect(Self.bytes(secret) == Array("ends with a blank line\n".utf8))
    }

    @Test func askpassFailingIsACancel() throws {
        let scripts = try AskpassScripts()
        defer { scripts.remove() }
        let askpass = try scripts.make("printf 'typed but then canceled\\n'; exit 1")
        let prompt = PassphrasePrompt(environment: ["KEYSMITH_ASKPASS": askpass], terminalPath: "/nonexistent/tty")
        #expect(throws: AuthenticationFailure.userCancel) { try prompt.read(prompt: "Password: ", interactionAllowed: true) }
    }

    /// A name without a slash is looked up in PATH (its absolute directories), as ssh does
    /// for SSH_ASKPASS; never run from the current directory, where a repository could hold
    /// a file of that name.
    @Test func anAskpassNameIsLookedUpInPathNeverInTheCurrentDirectory() throws {
        let scripts = try AskpassScripts()
        defer { scripts.remove() }
        let name = "keysmith-askpass-\(UUID().uuidString)"
        let marker = scripts.directory.appendingPathComponent("planted-ran").path
        // A file of that name in the current directory (the package, where tests run).
        let planted = FileManager.default.currentDirectoryPath + "/" + name
        try Data("#!/bin/sh\ntouch \(marker)\nprintf 'from the current directory\\n'\n".utf8).write(to: URL(fileURLWithPath: planted))
        chmod(planted, 0o755)
        defer { unlink(planted) }
        let onPath = scripts.directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: onPath, withIntermediateDirectories: true)
        try Data("#!/bin/sh\nprintf 'from PATH\\n'\n".utf8).write(to: onPath.appendingPathComponent(name))
        chmod(onPath.appendingPathComponent(name).path, 0o755)

        let found = PassphrasePrompt(
            environment: ["KEYSMITH_ASKPASS": name, "PATH": "relative/dir::\(onPath.path)"], terminalPath: "/nonexistent/tty")
        #expect(Self.bytes(try found.read(prompt: "Password: ", interactionAllowed: true)) == Array("from PATH".utf8))
        // Not on PATH (an empty entry and "." name the current directory in a shell): not run.
        let notFound = PassphrasePrompt(environment: ["KEYSMITH_ASKPASS": name, "PATH": ".::/nonexistent"], terminalPath: "/nonexistent/tty")
        #expect(throws: AuthenticationFailure.notInteractive) { try notFound.read(prompt: "Password: ", interactionAllowed: true) }
        #expect(!FileManager.default.fileExists(atPath: marker), "the file in the current directory ran")
    }

    @Test func anAskpassThatCannotRunFallsBackToTheTerminal() throws {
        let missing = PassphrasePrompt(environment: ["KEYSMITH_ASKPASS": "/nonexistent/askpass"], terminalPath: "/nonexistent/tty")
        #expect(throws: AuthenticationFailure.notInteractive) { try missing.read(prompt: "Password: ", interactionAllowed: true) }

        let terminal = try PseudoTerminal()
        let call = Self.run(PassphrasePrompt(environment: ["KEYSMITH_ASKPASS": "/nonexistent/askpass"], terminalPath: terminal.devicePath), "Password: ")
        terminal.readShown(until: "Password: ")
        terminal.type(Array("typed\n".utf8))
        #expect(try call.value()?.get() == Array("typed".utf8))
    }
}

/// Small askpass programs (shell scripts) in a temporary directory.
struct AskpassScripts {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keysmith-askpass-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// A script running `body` under /bin/sh; returns its path.
    func make(_ body: String) throws -> String {
        let path = directory.appendingPathComponent("askpass-\(UUID().uuidString)").path
        try Data("#!/bin/sh\n\(body)\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
        return path
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}
#endif
