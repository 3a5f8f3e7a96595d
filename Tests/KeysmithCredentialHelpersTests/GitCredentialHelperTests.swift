import Foundation
import Testing

/// `git-credential-keysmith` driven by Debian's `git credential approve / fill / reject`,
/// configured as users configure it (`credential.helper=keysmith`, found on the PATH).
struct GitCredentialHelperTests {
    /// `git -c credential.helper=keysmith [config…] credential ACTION`.
    func git(
        _ action: String, _ input: String, home: HelperHome, config: [String] = [], environment: [String: String] = [:]
    ) throws -> Run {
        var arguments = ["-c", "credential.helper=", "-c", "credential.helper=keysmith"]
        for setting in config { arguments += ["-c", setting] }
        return try run("git", arguments + ["credential", action], input: input + "\n", home: home, environment: environment)
    }

    @Test func approveThenFillReturnsTheStoredPassword() throws {
        let home = HelperHome()
        let password = testSecret()
        let approved = try git("approve", "protocol=https\nhost=git.example.com\nusername=ci\npassword=\(password)", home: home)
        #expect(approved.status == 0, "\(approved)")
        let filled = try git("fill", "protocol=https\nhost=git.example.com", home: home)
        #expect(filled.status == 0, "\(filled)")
        #expect(filled.fields["username"] == "ci")
        #expect(filled.fields["password"] == password)
        // Nothing secret on standard error.
        #expect(!approved.stderr.contains(password) && !filled.stderr.contains(password))
    }

    @Test func fillWithoutAStoredCredentialFindsNothing() throws {
        let home = HelperHome()
        let filled = try git("fill", "protocol=https\nhost=nothing.example.com", home: home)
        #expect(filled.status != 0)  // git would prompt; prompts are disabled here
        #expect(filled.fields["password"] == nil)
    }

    @Test func approveAgainReplacesThePasswordInPlace() throws {
        let home = HelperHome()
        let shared = ["KEYSMITH_ACCESS_GROUPS": "test.shared"]
        let first = testSecret("first"), second = testSecret("second")
        #expect(try git("approve", "protocol=https\nhost=h.example.com\nusername=ci\npassword=\(first)", home: home, environment: shared).status == 0)
        #expect(try git("approve", "protocol=https\nhost=h.example.com\nusername=ci\npassword=\(second)", home: home, environment: shared).status == 0)
        #expect(try git("fill", "protocol=https\nhost=h.example.com", home: home, environment: shared).fields["password"] == second)
        // One item, not two: a delete of every match on the host removes exactly one.
        let deleted = try keysmith(["--json", "delete-internet-password", "-s", "h.example.com", "--all"], home: home, environment: shared)
        #expect(deleted.status == 0, "\(deleted)")
        #expect(deleted.stdout.contains("\"deleted\" : 1") || deleted.stdout.contains("\"deleted\":1"), "\(deleted.stdout)")
    }

    @Test func rejectErasesOnlyTheCredentialGitNames() throws {
        let home = HelperHome()
        let alice = testSecret("alice"), bob = testSecret("bob")
        #expect(try git("approve", "protocol=https\nhost=r.example.com\nusername=alice\npassword=\(alice)", home: home).status == 0)
        #expect(try git("approve", "protocol=https\nhost=r.example.com\nusername=bob\npassword=\(bob)", home: home).status == 0)
        // A reject naming a password that is not the stored one erases nothing.
        #expect(try git("reject", "protocol=https\nhost=r.example.com\nusername=alice\npassword=wrong", home: home).status == 0)
        #expect(try git("fill", "protocol=https\nhost=r.example.com\nusername=alice", home: home).fields["password"] == alice)
        // The right one erases alice's item, and only hers.
        #expect(try git("reject", "protocol=https\nhost=r.example.com\nusername=alice\npassword=\(alice)", home: home).status == 0)
        #expect(try git("fill", "protocol=https\nhost=r.example.com\nusername=alice", home: home).fields["password"] == nil)
        #expect(try git("fill", "protocol=https\nhost=r.example.com\nusername=bob", home: home).fields["password"] == bob)
    }

    @Test func aPortIsPartOfTheKey() throws {
        let home = HelperHome()
        let password = testSecret()
        #expect(try git("approve", "protocol=https\nhost=p.example.com:8443\nusername=ci\npassword=\(password)", home: home).status == 0)
        #expect(try git("fill", "protocol=https\nhost=p.example.com:8443", home: home).fields["password"] == password)
        #expect(try git("fill", "protocol=https\nhost=p.example.com", home: home).fields["password"] == nil)
        #expect(try git("fill", "protocol=http\nhost=p.example.com:8443", home: home).fields["password"] == nil)
        // Erasing the host without the port leaves the port's credential alone.
        #expect(try git("reject", "protocol=https\nhost=p.example.com\nusername=ci", home: home).status == 0)
        #expect(try git("fill", "protocol=https\nhost=p.example.com:8443", home: home).fields["password"] == password)
    }

    @Test func useHttpPathGivesEachRepositoryItsOwnCredential() throws {
        let home = HelperHome()
        let first = testSecret("a"), second = testSecret("b")
        let paths = ["credential.useHttpPath=true"]
        #expect(try git("approve", "url=https://q.example.com/team/a.git\nusername=ci\npassword=\(first)", home: home, config: paths).status == 0)
        #expect(try git("approve", "url=https://q.example.com/team/b.git\nusername=ci\npassword=\(second)", home: home, config: paths).status == 0)
        #expect(try git("fill", "url=https://q.example.com/team/a.git", home: home, config: paths).fields["password"] == first)
        #expect(try git("fill", "url=https://q.example.com/team/b.git", home: home, config: paths).fields["password"] == second)
        // Without useHttpPath git sends no path: neither per-repository item answers.
        #expect(try git("fill", "url=https://q.example.com/team/a.git", home: home).fields["password"] == nil)
        // Rejecting one repository's credential keeps the other's.
        #expect(try git("reject", "url=https://q.example.com/team/a.git\nusername=ci", home: home, config: paths).status == 0)
        #expect(try git("fill", "url=https://q.example.com/team/a.git", home: home, config: paths).fields["password"] == nil)
        #expect(try git("fill", "url=https://q.example.com/team/b.git", home: home, config: paths).fields["password"] == second)
    }

    @Test func keysmithFindsWhatGitStoredInASharedAccessGroup() throws {
        let home = HelperHome()
        let password = testSecret()
        let shared = ["KEYSMITH_ACCESS_GROUPS": "test.shared"]
        #expect(
            try git("approve", "protocol=https\nhost=k.example.com:8443\npath=team/app.git\nusername=ci\npassword=\(password)",
                home: home, config: ["credential.useHttpPath=true"], environment: shared).status == 0)
        let found = try keysmith(["find-internet-password", "-s", "k.example.com", "-a", "ci", "-w"], home: home, environment: shared)
        #expect(found.status == 0, "\(found)")
        #expect(found.stdout == password + "\n")
        // The item's shape is git-credential-osxkeychain's.
        let item = try keysmith(["--json", "find-internet-password", "-s", "k.example.com", "-a", "ci"], home: home, environment: shared)
        let object = try #require(try JSONSerialization.jsonObject(with: item.standardOutput) as? [String: Any])
        #expect(object["protocol"] as? String == "htps" || (object["protocol"] as? String)?.contains("https") == true)
        #expect("\(object["port"] ?? "")" == "8443")
        #expect(object["path"] as? String == "team/app.git")
        #expect("\(object["authenticationType"] ?? "")".contains("dflt") || "\(object["authenticationType"] ?? "")" == "default")
        // And what keysmith stores in git's shape, git finds.
        let other = testSecret("cli")
        let added = try run(
            product("keysmith"),
            ["add-internet-password", "-s", "cli.example.com", "-r", "https", "-t", "default", "-a", "ci", "--stdin"],
            input: other, home: home, environment: shared)
        #expect(added.status == 0, "\(added)")
        #expect(try git("fill", "protocol=https\nhost=cli.example.com", home: home, environment: shared).fields["password"] == other)
    }

    @Test func keysmithFindsWhatGitStoredWithDefaultSettings() throws {
        let home = HelperHome()
        let password = testSecret()
        #expect(try git("approve", "protocol=https\nhost=d.example.com\nusername=ci\npassword=\(password)", home: home).status == 0)
        // No configuration: the helper and the keysmith tool share the default access group.
        let found = try keysmith(["find-internet-password", "-s", "d.example.com", "-a", "ci", "-w"], home: home)
        #expect(found.status == 0, "\(found)")
        #expect(found.stdout == password + "\n")
    }
}
