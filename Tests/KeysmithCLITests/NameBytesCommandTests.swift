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
