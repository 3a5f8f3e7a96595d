import Foundation
import Testing
@testable import KeychainServices

/// Export and import: a round trip keeps every exportable item with its data and
/// attributes, leaves ThisDeviceOnly items behind, and refuses a wrong passphrase or an
/// altered archive.
@Suite struct KeychainArchiveTests {
    init() { PassphraseKey.fastForTesting.store(true, ordering: .relaxed) }

    static let accessibilities = ["ak", "ck", "dk", "aku", "cku", "dku"]

    @Test func roundTripLeavesThisDeviceOnlyItemsBehind() throws {
        let archive: Data = try TemporaryKeychain.with { _ in
            for pdmn in Self.accessibilities {
                let add = genp("com.example.archive", "acct-\(pdmn)").with([
                    kSecAttrAccessible as String: pdmn, kSecValueData as String: Data("secret-\(pdmn)".utf8),
                    kSecAttrLabel as String: "label \(pdmn)",
                ])
                #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            }
            let inet: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com",
                kSecAttrAccount as String: "bob", kSecAttrPort as String: 8443, kSecValueData as String: Data("inet".utf8),
            ]
            #expect(SecItemAdd(inet as CFDictionary, nil) == errSecSuccess)
            let exported = try KeychainArchive.export(passphrase: "archive pass")
            #expect(exported.count == 4)
            #expect(exported.archive.range(of: Data("secret-ak".utf8)) == nil)
            return exported.archive
        }
        try TemporaryKeychain.with { _ in
            #expect(throws: KeychainStateError.self) { try KeychainArchive.import(archive, passphrase: "wrong") }
            var altered = archive
            altered[altered.count - 1] ^= 1
            #expect(throws: KeychainStateError.self) { try KeychainArchive.import(altered, passphrase: "archive pass") }
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(genp("com.example.archive", "acct-ak") as CFDictionary, &result) == errSecItemNotFound)

            let summary = try KeychainArchive.import(archive, passphrase: "archive pass")
            #expect(summary == KeychainArchive.ImportSummary(added: 4, skipped: 0))
            for pdmn in Self.accessibilities {
                let query = genp("com.example.archive", "acct-\(pdmn)").with([
                    kSecReturnData as String: true, kSecReturnAttributes as String: true,
                ])
                let status = SecItemCopyMatching(query as CFDictionary, &result)
                if pdmn.hasSuffix("u") {
                    #expect(status == errSecItemNotFound, "\(pdmn) stays on its machine")
                } else {
                    #expect(status == errSecSuccess)
                    let attributes = result as? [String: Any]
                    #expect(attributes?[kSecValueData as String] as? Data == Data("secret-\(pdmn)".utf8))
                    #expect(attributes?[kSecAttrAccessible as String] as? String == pdmn)
                    #expect(attributes?[kSecAttrLabel as String] as? String == "label \(pdmn)")
                }
            }
            let again = try KeychainArchive.import(archive, passphrase: "archive pass")
            #expect(again == KeychainArchive.ImportSummary(added: 0, skipped: 4))
        }
    }
}
