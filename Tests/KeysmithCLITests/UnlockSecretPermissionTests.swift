// The unlock secrets' permissions, tried by a process of another uid that possesses them
// through a session keyring shared with the owner (`keyctl link @u @s`).
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct UnlockSecretPermissionTests {
    static let owner: uid_t = 54331
    static let other: uid_t = 54332

    static var canRun: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/keyctl")
    }

    /// The owner unlocks a keychain and links its user keyring into a session keyring that
    /// the other uid's process shares; that process possesses the unlock secrets then, and
    /// still can neither read nor overwrite them (possessor: view only).
    @Test(.enabled(if: canRun, "needs root, setpriv and keyctl (keyutils)"))
    func anotherUserThatPossessesTheSecretsCannotReadOrWriteThem() throws {
        let home = TemporaryHome()
        chown(home.url.path, Self.owner, Self.owner)
        let keychain = home.url.appendingPathComponent("kc").path
        let tool = keysmithExecutable().path
        let asOwner = "setpriv --reuid=\(Self.owner) --regid=\(Self.owner) --clear-groups"
        let asOther = "setpriv --reuid=\(Self.other) --regid=\(Self.other) --clear-groups"
        // In a new session keyring that both uids may link into and search.
        let script = """
            keyctl setperm @s 0x3f3f3f3f >/dev/null
            \(asOwner) /bin/sh -c '
              printf "pw\\n" | HOME=\(home.url.path) KEYSMITH_KDF_PROFILE=fast \(tool) --keychain \(keychain) create --stdin >/dev/null || exit 3
              keyctl link @u @s >/dev/null || exit 4
              for key in $(keyctl rlist @u); do
                case "$(keyctl rdescribe $key)" in *";keysmith:"*":c") echo "secret $key $(keyctl rdescribe $key | cut -d";" -f4)";; esac
              done
            ' > \(home.url.path)/owner.out || exit 5
            secret=$(awk "/^secret/ {print \\$2}" \(home.url.path)/owner.out)
            [ -n "$secret" ] || exit 6
            \(asOther) /bin/sh -c "
              keyctl print $secret >/dev/null 2>&1 && echo READ || echo NOREAD
              printf attacker | keyctl pupdate $secret >/dev/null 2>&1 && echo WROTE || echo NOWRITE
              keyctl rdescribe @s >/dev/null 2>&1 && echo SESSION || echo NOSESSION
            "
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/keyctl")
        process.arguments = ["session", "-", "/bin/sh", "-c", script]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        let ownerOut = (try? String(contentsOfFile: home.url.path + "/owner.out", encoding: .utf8)) ?? ""
        // The secret's permissions: possessor view only; the user view, read, write, search,
        // link, setattr.
        #expect(ownerOut.contains(" 013f0000"), "\(ownerOut)")
        #expect(text.contains("SESSION"), "the other uid shares the session keyring: \(text)")
        #expect(text.contains("NOREAD"), "\(text)")
        #expect(text.contains("NOWRITE"), "\(text)")
        #expect(!text.contains("READ\n") || text.contains("NOREAD"))
        // The owner still reads it: the keychain is unlocked for its processes.
        let status = try keysmith(
            ["--keychain", keychain, "--json", "status"], home: home, useKeychainFlag: false,
            launcher: ["/usr/bin/setpriv", "--reuid=\(Self.owner)", "--regid=\(Self.owner)", "--clear-groups"])
        #expect(try status.json()["lockState"] as? String == "unlocked", "\(status)")
        _ = try keysmith(
            ["--keychain", keychain, "lock", "--all"], home: home, useKeychainFlag: false,
            launcher: ["/usr/bin/setpriv", "--reuid=\(Self.owner)", "--regid=\(Self.owner)", "--clear-groups"])
    }
}
