import Foundation
import Testing

/// The tool compares service names byte for byte: "jos\u{E9}" and "jose\u{301}" are two services.
struct NameBytesCommandTests {
    @Test func migrateServiceMovesItemsBetweenServicesThatDifferOnlyInUnicodeForm() throws {
        let home = TemporaryHome()
        let old = "com.example.jose\u{301}"
        let new = "com.example.jos\u{E9}"
        try storeGenericPassword("twin-secret", service: old, account: "token", home: home)
        let moved = try keysmith(["migrate-service", old, new], home: home)
        #expect(moved.status == 0, "\(moved)")
        let read = try keysmith(["find-generic-password", "-s", new, "-a", "token", "-w"], home: home)
        #expect(read.stdout == "twin-secret\n", "\(read)")
        let gone = try keysmith(["find-generic-password", "-s", old, "-a", "token"], home: home)
        #expect(gone.status == 44, "\(gone)")
        // The same bytes are still the same service.
        let same = try keysmith(["migrate-service", new, new], home: home)
        #expect(same.status != 0)
        #expect(same.stderr.contains("same service"), "\(same)")
    }
}

/// Names are UTF-8 text: an argument that is not valid UTF-8 is refused, never read as
/// another name (Swift would repair each invalid byte into U+FFFD, so `tenant\xFF` and
/// `tenant\xFE` would both be the service `tenant\u{FFFD}`).
struct ArgumentBytesCommandTests {
    /// Runs keysmith with `arguments` followed by one more argument, `shellBytes` as `printf`
    /// writes it (for example `tenant\377`), which Foundation's Process cannot pass.
    private func keysmith(_ arguments: [String], lastArgumentBytes shellBytes: String, home: TemporaryHome, standardInput: String? = nil)
        throws -> RunResult
    {
        try KeysmithCLITests.keysmith(
            arguments, home: home, standardInput: standardInput,
            launcher: ["/bin/sh", "-c", "exec \"$0\" \"$@\" \"$(printf '\(shellBytes)')\""])
    }

    @Test func serviceThatIsNotUTF8_isRefused_andNeverReachesAnotherServicesItem() throws {
        let home = TemporaryHome()
        let stored = try keysmith(
            ["add-generic-password", "-a", "me", "--stdin", "-s"], lastArgumentBytes: "tenant\\377", home: home,
            standardInput: "first-tenant-secret")
        #expect(stored.status == 2, "\(stored)")
        #expect(stored.stderr.contains("not valid UTF-8"), "\(stored)")
        let read = try keysmith(["find-generic-password", "-a", "me", "-w", "-s"], lastArgumentBytes: "tenant\\376", home: home)
        #expect(read.status == 2, "\(read)")
        #expect(!read.stdout.contains("first-tenant-secret"), "\(read)")
        let repaired = try KeysmithCLITests.keysmith(["find-generic-password", "-s", "tenant\u{FFFD}", "-a", "me"], home: home)
        #expect(repaired.status == 44, "\(repaired)")
    }

    @Test func secretThatIsNotUTF8_isNotRepeatedInTheMessage() throws {
        let home = TemporaryHome()
        let stored = try keysmith(
            ["add-generic-password", "-s", "svc", "-a", "me", "-w"], lastArgumentBytes: "hunter\\3772", home: home)
        #expect(stored.status == 2, "\(stored)")
        #expect(!stored.stderr.contains("hunter"), "\(stored)")
    }
}
