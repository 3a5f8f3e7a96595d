// Keychain code in the shapes tutorials and popular wrappers write it on Apple platforms,
// with the Core Foundation and Security names they call around SecItem (`noErr`,
// `SecRandomCopyBytes`, `CFErrorGetDomain`, `CFDataGetBytePtr`, `CFEqual`, …). Only the
// import differs from the Apple original; everything runs on a real temporary keychain.
import Foundation
import KeychainServices
import Testing

// MARK: - A wrapper's error bridge (as KeychainAccess writes it)

extension CFError {
    /// The `NSError` of a `CFError`, read through the CF accessors.
    var tutorialError: NSError {
        let domain = CFErrorGetDomain(self) as String
        let code = CFErrorGetCode(self)
        let userInfo = CFErrorCopyUserInfo(self) as! [String: Any]
        return NSError(domain: domain, code: code, userInfo: userInfo)
    }
}

// MARK: - A tutorial's keychain helper

private final class TutorialKeychain {
    var lastResultCode: OSStatus = noErr

    func save(_ password: String, service: String, account: String) -> Bool {
        let data = password.data(using: .utf8)!
        let query = [
            kSecClass: kSecClassGenericPassword,
            kSecAttrService: service,
            kSecAttrAccount: account,
            kSecValueData: data,
        ] as CFDictionary
        SecItemDelete(query)  // the result may be ignored, as with any C function on iOS
        lastResultCode = SecItemAdd(query, nil)
        return lastResultCode == noErr
    }

    func load(service: String, account: String) -> String? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecReturnData as String: kCFBooleanTrue!,
            kSecMatchLimit as String: kSecMatchLimitOne,
        ]
        var dataTypeRef: AnyObject?
        let status = withUnsafeMutablePointer(to: &dataTypeRef) {
            SecItemCopyMatching(query as CFDictionary, UnsafeMutablePointer($0))
        }
        guard status == noErr, let data = dataTypeRef as? Data else { return nil }
        return String(data: data, encoding: .utf8)
    }

    /// KeychainAccess's `removeAll()`: on Linux the macOS branch is compiled.
    func removeAll(service: String) -> OSStatus {
        var query: [String: Any] = [
            String(kSecClass): String(kSecClassGenericPassword),
            String(kSecAttrService): service,
        ]
        #if !os(iOS) && !os(watchOS) && !os(tvOS)
        query[String(kSecMatchLimit)] = kSecMatchLimitAll
        #endif
        return SecItemDelete(query as CFDictionary)
    }
}

/// A random key, the three ways tutorials write it.
private func randomKeys(count: Int) throws -> [Data] {
    var bytes = [UInt8](repeating: 0, count: count)
    let status = SecRandomCopyBytes(kSecRandomDefault, bytes.count, &bytes)
    guard status == errSecSuccess else { throw NSError(domain: NSOSStatusErrorDomain, code: Int(status)) }

    var data = Data(count: count)
    let result = data.withUnsafeMutableBytes {
        SecRandomCopyBytes(kSecRandomDefault, count, $0.baseAddress!)
    }
    guard result == errSecSuccess else { throw NSError(domain: NSOSStatusErrorDomain, code: Int(result)) }

    var signed = [Int8](repeating: 0, count: count)
    _ = SecRandomCopyBytes(kSecRandomDefault, count, &signed)
    return [Data(bytes), data, Data(signed.map { UInt8(bitPattern: $0) })]
}

struct TutorialIdiomTests {
    @Test func helperSavesLoadsAndRemovesAll() {
        TemporaryKeychain.with { _ in
            let keychain = TutorialKeychain()
            #expect(keychain.save("hunter2", service: "tutorial", account: "alice"))
            #expect(keychain.save("hunter3", service: "tutorial", account: "alice"))  // delete, then add
            #expect(keychain.save("swordfish", service: "tutorial", account: "bob"))
            #expect(keychain.lastResultCode == noErr)
            #expect(keychain.load(service: "tutorial", account: "alice") == "hunter3")
            #expect(keychain.removeAll(service: "tutorial") == noErr)
            #expect(keychain.load(service: "tutorial", account: "bob") == nil)
            #expect(keychain.removeAll(service: "tutorial") == errSecItemNotFound)
        }
    }

    @Test func randomBytesAreRandomAndOfTheRightSize() throws {
        let keys = try randomKeys(count: 32)
        #expect(keys.allSatisfy { $0.count == 32 })
        #expect(Set(keys).count == 3, "three draws of 32 random bytes are different")
        #expect(!keys.contains(Data(count: 32)))
        var nothing = [UInt8]()
        #expect(SecRandomCopyBytes(kSecRandomDefault, 0, &nothing) == errSecSuccess)
        var one = [UInt8](repeating: 0, count: 1)
        #expect(SecRandomCopyBytes(kSecRandomDefault, -1, &one) == errSecParam)
    }

    @Test func accessControlErrorBecomesAnNSError() throws {
        var error: Unmanaged<CFError>?
        let access = SecAccessControlCreateWithFlags(
            kCFAllocatorDefault, "not an accessibility" as CFTypeRef, .userPresence, &error)
        #expect(access == nil)
        let cfError = try #require(error?.takeRetainedValue())
        let nsError = cfError.tutorialError
        #expect(nsError.domain == NSOSStatusErrorDomain)
        #expect(nsError.code == Int(errSecParam))
        #expect(CFErrorGetDomain(cfError) as String == kCFErrorDomainOSStatus as String)
        let description = CFErrorCopyDescription(cfError) as String
        #expect(description.contains("kSecAttrAccessible"))
        #expect(nsError.localizedDescription == description)
        let thrown: Error = cfError as Error
        #expect((thrown as NSError).code == Int(errSecParam))

        let made = CFErrorCreate(nil, kCFErrorDomainOSStatus, CFIndex(errSecItemNotFound), nil)!
        #expect(CFErrorGetCode(made) == CFIndex(errSecItemNotFound))
        #expect((CFErrorCopyUserInfo(made) as! [String: Any]).isEmpty)
        #expect(CFErrorCopyFailureReason(made) == nil)
    }

    @Test func resultsReadThroughCoreFoundation() throws {
        try TemporaryKeychain.with { _ in
            let service = CFStringCreateWithCString(nil, "cf.tutorial", CFStringBuiltInEncodings.UTF8.rawValue)!
            for account in ["alice", "bob"] {
                let attributes: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: service,
                    kSecAttrAccount as String: account,
                    kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked,
                    kSecAttrSynchronizable as String: kCFBooleanFalse!,
                    kSecValueData as String: Data("pw-\(account)".utf8),
                ]
                #expect(SecItemAdd(attributes as CFDictionary, nil) == noErr)
            }

            // One item's data, checked by type and read byte by byte.
            var result: CFTypeRef?
            let one: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: "alice", kSecReturnData as String: kCFBooleanTrue!,
            ]
            #expect(SecItemCopyMatching(one as CFDictionary, &result) == errSecSuccess)
            #expect(CFGetTypeID(result) == CFDataGetTypeID())
            let cfData = result as! CFData
            let bytes = Data(bytes: CFDataGetBytePtr(cfData), count: CFDataGetLength(cfData))
            #expect(String(decoding: bytes, as: UTF8.self) == "pw-alice")
            #expect(CFDataGetLength(CFDataCreate(nil, [1, 2, 3], 3)) == 3)

            // Every item's attributes: counted as a CFArray, read as Swift collections.
            let all: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
            ]
            result = nil
            #expect(SecItemCopyMatching(all as CFDictionary, &result) == errSecSuccess)
            #expect(CFGetTypeID(result) == CFArrayGetTypeID())
            let array = result as! CFArray
            #expect(CFArrayGetCount(array) == 2)
            let items = try #require(array as? [[String: Any]])
            #expect(items.compactMap { $0[kSecAttrAccount as String] as? String }.sorted() == ["alice", "bob"])
            for attributes in items {
                let accessible = attributes[kSecAttrAccessible as String] as CFTypeRef
                #expect(CFEqual(accessible, kSecAttrAccessibleWhenUnlocked))
                #expect(!CFEqual(accessible, kSecAttrAccessibleAfterFirstUnlock))
                #expect(CFDictionaryGetCount(attributes as CFDictionary) == attributes.count)
            }
            #expect(CFBooleanGetValue(kCFBooleanTrue) && !CFBooleanGetValue(kCFBooleanFalse))
            #expect(CFStringGetLength(service) == 11)
        }
    }

    @Test func bundleDefaultsAsWrappersReadThem() {
        // Wrappers default their service to the bundle identifier; on Linux there is none,
        // so the fallback they give is what they use.
        let service = Bundle.main.infoDictionary?[kCFBundleIdentifierKey as String] as? String ?? "com.example.fallback"
        #expect(!service.isEmpty)
        #expect(SecCopyErrorMessageString(errSecItemNotFound, nil) as String? == "The specified item could not be found in the keychain.")
    }
}
