import Foundation
import Testing

@testable import KeysmithCredentialHelpers

/// Parsing git's credential format and the item key it names.
struct GitCredentialTests {
    @Test func parsesEveryAttributeGitSends() throws {
        let input = """
            capability[]=authtype
            capability[]=state
            protocol=https
            host=git.example.com:8443
            path=team/app.git
            username=ci
            password=p=ss
            password_expiry_utc=1900000000
            oauth_refresh_token=refresh
            wwwauth[]=Basic realm="git"
            state[]=other:1
            future_key=ignored

            protocol=ignored-after-blank-line
            """
        let credential = try GitCredential(parsing: Data(input.utf8))
        #expect(credential.protocol == "https")
        #expect(credential.host == "git.example.com:8443")
        #expect(credential.path == "team/app.git")
        #expect(credential.username == "ci")
        #expect(credential.password == Data("p=ss".utf8))
        #expect(credential.passwordExpiryUTC == "1900000000")
        #expect(credential.oauthRefreshToken == Data("refresh".utf8))
        #expect(credential.capabilities == ["authtype", "state"])
        #expect(credential.state == ["other:1"])
    }

    @Test func aLineWithoutEqualsIsAnErrorThatDoesNotRepeatIt() {
        #expect(throws: HelperFailure.self) { try GitCredential(parsing: Data("protocol=https\nhunter2\n".utf8)) }
        let result = GitCredentialHelper.run(action: "get", input: Data("protocol=https\nhunter2\n".utf8))
        #expect(result.status == 1)
        #expect(result.standardError?.contains("line 2") == true)
        #expect(result.standardError?.contains("hunter2") == false)
    }

    @Test func hostAndPortSplitLikeGitWritesThem() throws {
        let cases: [(String, String, Int)] = [
            ("example.com", "example.com", 0), ("example.com:8443", "example.com", 8443),
            ("127.0.0.1:80", "127.0.0.1", 80), ("[::1]:8080", "[::1]", 8080), ("[::1]", "[::1]", 0),
        ]
        for (host, server, port) in cases {
            let split = try GitItemKey.split(host: host)
            #expect(split.0 == server && split.1 == port, "\(host)")
        }
        for bad in ["example.com:", "example.com:http", "example.com:70000", "example.com:-1"] {
            #expect(throws: HelperFailure.self, "\(bad)") { try GitItemKey.split(host: bad) }
        }
    }

    @Test func keyUsesOsxkeychainProtocolCodesAndIgnoresOthers() throws {
        var credential = GitCredential()
        credential.host = "example.com"
        credential.protocol = "https"
        #expect(try GitItemKey(credential)?.protocolCode == "htps")
        credential.protocol = "imaps"
        #expect(try GitItemKey(credential)?.protocolCode == "imps")
        credential.protocol = "cert"
        #expect(try GitItemKey(credential) == nil)
        credential.protocol = "https"
        credential.host = ""
        #expect(try GitItemKey(credential) == nil)
    }

    @Test func unknownActionsAreIgnoredAndNoActionIsUsage() {
        #expect(GitCredentialHelper.run(action: "frobnicate", input: Data("protocol=https\n".utf8)).status == 0)
        let usage = GitCredentialHelper.run(action: nil, input: Data())
        #expect(usage.status == 1)
        #expect(usage.standardError?.hasPrefix("usage:") == true)
    }

    @Test func constantTimeComparison() {
        #expect(ConstantTime.equal(Data("abc".utf8), Data("abc".utf8)))
        #expect(!ConstantTime.equal(Data("abc".utf8), Data("abd".utf8)))
        #expect(!ConstantTime.equal(Data("abc".utf8), Data("abcd".utf8)))
        #expect(!ConstantTime.equal(Data(), Data("a".utf8)))
        #expect(ConstantTime.equal(Data(), Data()))
    }
}
