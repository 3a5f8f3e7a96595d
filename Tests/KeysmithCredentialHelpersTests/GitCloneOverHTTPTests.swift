import Foundation
import Testing

/// The whole path a user takes: `git clone` over HTTP from a loopback server that demands
/// Basic authentication, with `credential.helper=keysmith`.
struct GitCloneOverHTTPTests {
    @Test func firstCloneAsksAndStoresSecondNeedsNoAskpassRejectedPasswordIsErased() throws {
        let home = HelperHome()
        let user = "ci"
        let password = testSecret()

        // A bare repository with one commit.
        let identity = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]
        #expect(try run("git", ["init", "-q", "source"], home: home).status == 0)
        try "hello\n".write(toFile: home.path("source/README"), atomically: true, encoding: .utf8)
        #expect(try run("git", ["add", "README"], home: home, directory: home.path("source")).status == 0)
        #expect(try run("git", identity + ["commit", "-q", "-m", "first"], home: home, directory: home.path("source")).status == 0)
        try FileManager.default.createDirectory(atPath: home.path("served"), withIntermediateDirectories: true)
        #expect(try run("git", ["clone", "-q", "--bare", "source", "served/repo.git"], home: home).status == 0)

        let passwordFile = home.path("server-password")
        try password.write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let serverLog = home.path("server.log")
        _ = FileManager.default.createFile(atPath: serverLog, contents: nil)
        let server = try GitHTTPServer(root: home.path("served"), user: user, passwordFile: passwordFile, log: serverLog, home: home)
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/repo.git"

        // Askpass scripts: one that answers (the password comes from a file, not argv),
        // one that refuses; both log every prompt.
        let askpassLog = home.path("askpass.log")
        _ = FileManager.default.createFile(atPath: askpassLog, contents: nil)
        let answering = home.path("askpass-answer.sh")
        try """
            #!/bin/sh
            echo "$1" >> '\(askpassLog)'
            case "$1" in
              Username*) echo '\(user)' ;;
              *) cat '\(passwordFile).askpass' ;;
            esac
            """.write(toFile: answering, atomically: true, encoding: .utf8)
        try password.write(toFile: passwordFile + ".askpass", atomically: true, encoding: .utf8)
        let refusing = home.path("askpass-refuse.sh")
        try "#!/bin/sh\necho \"$1\" >> '\(askpassLog)'\nexit 1\n".write(toFile: refusing, atomically: true, encoding: .utf8)
        for script in [answering, refusing] {
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: script)
        }
        func clone(_ destination: String, askpass: String) throws -> Run {
            try run(
                "git", ["-c", "credential.helper=", "-c", "credential.helper=keysmith", "clone", "-q", url, destination],
                home: home, environment: ["GIT_ASKPASS": askpass])
        }
        func prompts() throws -> [String] {
            try String(contentsOfFile: askpassLog, encoding: .utf8).split(separator: "\n").map(String.init)
        }
        func stored() throws -> String? {
            try run(product("git-credential-keysmith"), ["get"], input: "protocol=http\nhost=127.0.0.1:\(server.port)\n\n", home: home)
                .fields["password"]
        }

        // 1. The first clone asks (user name and password) and the helper stores the answer.
        let first = try clone("first", askpass: answering)
        #expect(first.status == 0, "\(first)")
        let firstPrompts = try prompts()
        #expect(firstPrompts.count == 2, "\(firstPrompts)")
        #expect(try stored() == password)
        #expect(FileManager.default.fileExists(atPath: home.path("first/README")))

        // 2. The second clone needs no askpass: the helper answers.
        let second = try clone("second", askpass: refusing)
        #expect(second.status == 0, "\(second)")
        let secondPrompts = try prompts()
        #expect(secondPrompts.count == 2, "askpass was asked again: \(secondPrompts)")
        #expect(FileManager.default.fileExists(atPath: home.path("second/README")))

        // 3. The server changes the password: the stored one is refused and git erases it.
        try testSecret("rotated").write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let third = try clone("third", askpass: refusing)
        #expect(third.status != 0)
        #expect(try String(contentsOfFile: serverLog, encoding: .utf8).contains("401 with credentials"))
        #expect(try stored() == nil)
        #expect(!first.stderr.contains(password) && !second.stderr.contains(password) && !third.stderr.contains(password))
    }
}
