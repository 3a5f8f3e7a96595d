import Foundation
import Keysmith
import KeychainServices
import Synchronization

/// An `Unlock` waiting for its prompt: the client that asked, and the locked objects.
struct PendingPrompt {
    let owner: String
    let objects: [String]
    var running: Bool
}

/// How an unlock prompt ended.
enum PromptOutcome: Sendable {
    /// The keychain is unlocked.
    case unlocked
    /// Nothing was unlocked; the message says why and what to do (it never holds a secret).
    case dismissed(String)
}

/// The outcomes of prompts that ran on their own thread, collected for the service's thread.
final class PromptResults: Sendable {
    private let finished = Mutex<[(Int, PromptOutcome)]>([])

    func add(_ number: Int, _ outcome: PromptOutcome) {
        finished.withLock { $0.append((number, outcome)) }
    }

    func take() -> [(Int, PromptOutcome)] {
        finished.withLock { list in
            defer { list = [] }
            return list
        }
    }
}

/// `org.freedesktop.Secret.Prompt`: unlocking the keychain. With `KEYSMITH_ASKPASS` set (an
/// ssh-askpass-style program: the prompt as its argument, the passphrase on its standard
/// output) the prompt runs it and unlocks the keychain with what it prints; without, the prompt
/// completes as dismissed and the service says to run `keysmith unlock`.
extension SecretServiceServer {
    /// Why an unlock without a prompt program cannot happen here.
    static let unlockAdvice =
        "the keychain is locked and the Secret Service has no way to ask for its passphrase: run 'keysmith unlock' "
        + "(or start the service with KEYSMITH_ASKPASS naming a program that asks), then try again."

    func promptMethod(_ call: BusCall, _ member: String, _ number: Int) throws(SecretServiceError) -> [DBusValue]? {
        guard var prompt = prompts[number] else { throw .noSuchObject("there is no prompt at \(call.path).") }
        guard ObjectPath.same(prompt.owner, call.sender) else {
            throw .accessDenied("the prompt at \(call.path) belongs to the client that asked to unlock; only that client answers or dismisses it.")
        }
        switch member {
        case "Prompt":
            _ = try arguments(call, "s")
            guard !prompt.running else { return [] }
            prompt.running = true
            prompts[number] = prompt
            call.reply([])
            if askpassRunning {
                // One askpass program at a time: a client cannot fill the screen (and the process
                // table) with them; this prompt completes with the running one's outcome.
                promptsJoiningAskpass.append(number)
            } else if let program = Self.askpassProgram() {
                askpassRunning = true
                let results = promptResults
                let thread = Thread {
                    results.add(number, Self.runAskpass(program))
                }
                thread.start()
            } else {
                finishPrompt(number, .dismissed(Self.unlockAdvice))
            }
            return nil
        case "Dismiss":
            try expect(call, "")
            call.reply([])
            finishPrompt(number, .dismissed("the prompt was dismissed."))
            return nil
        default:
            throw unknownMethod(call)
        }
    }

    /// The askpass program ended: its prompt and those that joined it complete.
    func finishAskpass(_ number: Int, _ outcome: PromptOutcome) {
        askpassRunning = false
        let joined = promptsJoiningAskpass
        promptsJoiningAskpass = []
        finishPrompt(number, outcome)
        for other in joined { finishPrompt(other, outcome) }
    }

    func finishPrompt(_ number: Int, _ outcome: PromptOutcome) {
        guard let prompt = prompts.removeValue(forKey: number) else { return }
        announceLockChanges()
        let path = ObjectPath.promptPath(number)
        switch outcome {
        case .unlocked:
            let unlocked = prompt.objects.filter { (try? collectionOf($0).isLocked) == false }
            emit(path, "org.freedesktop.Secret.Prompt", "Completed", [.boolean(unlocked.isEmpty), .variant(.objectPaths(unlocked))])
        case .dismissed(let message):
            FileHandle.standardError.write(Data("keysmith secret-service: unlock not done: \(message)\n".utf8))
            emit(path, "org.freedesktop.Secret.Prompt", "Completed", [.boolean(true), .variant(.objectPaths([]))])
        }
    }

    /// The askpass program `KEYSMITH_ASKPASS` names (a path, or a name looked up in `PATH`).
    static func askpassProgram() -> String? {
        guard let name = ProcessInfo.processInfo.environment["KEYSMITH_ASKPASS"], !name.isEmpty else { return nil }
        if name.utf8.contains(UInt8(ascii: "/")) { return name }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") where directory.hasPrefix("/") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Runs the askpass program and unlocks the keychain with what it prints.
    static func runAskpass(_ program: String) -> PromptOutcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = ["Keysmith: a program asks to unlock the keychain. Keychain passphrase:"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return .dismissed("the askpass program \(program) could not be started: \(error.localizedDescription).")
        }
        var bytes = [UInt8](output.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        defer { bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { memset(base, 0, $0.count) } } }
        guard process.terminationStatus == 0 else { return .dismissed("the askpass program was cancelled.") }
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard !bytes.isEmpty else { return .dismissed("no passphrase was given.") }
        let passphrase = String(decoding: bytes, as: UTF8.self)
        do {
            try KeychainEnvironment.unlock(passphrase: passphrase)
            return .unlocked
        } catch let error as KeychainStateError where error.status == errSecAuthFailed {
            return .dismissed("the passphrase was wrong; nothing was unlocked.")
        } catch {
            return .dismissed("the keychain could not be unlocked: \(error)")
        }
    }
}
