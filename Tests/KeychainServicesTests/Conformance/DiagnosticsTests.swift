import Foundation
import Synchronization
@testable import KeychainServices
import Testing

extension Conformance {
/// KeychainDiagnostics (public API of this module, not part of Apple's API): a failed call
/// records a cause, a successful one clears it, and the cause never contains secrets.
struct DiagnosticsTests {
    @Test func failureIsRecordedWithoutSecretsAndClearedOnSuccess() {
        TemporaryKeychain.with { _ in
            let secretText = "correct-horse-battery-staple"
            #expect(secAdd(genp().with(kSecValueData, Data(secretText.utf8))) == errSecSuccess)
            #expect(KeychainDiagnostics.lastFailureDescription == nil)
            #expect(secAdd(genp().with(kSecValueData, Data(secretText.utf8))) == errSecDuplicateItem)
            let description = KeychainDiagnostics.lastFailureDescription
            #expect(description != nil)
            let leaksSecret = description?.contains(secretText) ?? false
            #expect(!leaksSecret, "the failure description must not contain the secret")
            #expect(secUpdate(genp(), [kSecValueData as String: secretText]) == errSecParam)
            let leaksSecretOnParam = KeychainDiagnostics.lastFailureDescription?.contains(secretText) ?? false
            #expect(!leaksSecretOnParam, "the failure description must not contain the secret")
            #expect(secCopy(genp()).status == errSecSuccess)
            #expect(KeychainDiagnostics.lastFailureDescription == nil)
        }
    }

    /// The cause belongs to the thread that made the call: another thread's calls, failed
    /// or successful, neither show nor clear it.
    @Test func failureIsKeptPerThread() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, Data("one".utf8))) == errSecSuccess)
            #expect(secAdd(genp().with(kSecValueData, Data("one".utf8))) == errSecDuplicateItem)
            let mine = KeychainDiagnostics.lastFailureDescription
            #expect(mine != nil)
            let environment = KeychainEnvironment.current
            let seen = Mutex<(before: String?, afterFailure: String?, afterSuccess: String?)>((nil, nil, nil))
            let done = DispatchSemaphore(value: 0)
            let other = Thread {
                defer { done.signal() }
                KeychainEnvironment.withEnvironment(environment) {
                    let before = KeychainDiagnostics.lastFailureDescription
                    _ = secUpdate(genp(), [kSecValueData as String: "text"])  // errSecParam
                    let afterFailure = KeychainDiagnostics.lastFailureDescription
                    _ = secCopy(genp())
                    let afterSuccess = KeychainDiagnostics.lastFailureDescription
                    seen.withLock { $0 = (before, afterFailure, afterSuccess) }
                }
            }
            other.start()
            done.wait()
            let observed = seen.withLock { $0 }
            #expect(observed.before == nil)
            #expect(observed.afterFailure != nil && observed.afterFailure != mine)
            #expect(observed.afterSuccess == nil)
            #expect(KeychainDiagnostics.lastFailureDescription == mine)
        }
    }

    /// Diagnostics name keys and classes as the reader wrote them (`kSecAttrServer`,
    /// `kSecClassGenericPassword`), never by the strings behind them (`srvr`, `genp`).
    @Test func diagnosticsUseConstantNames() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecAttrServer, "example.com")) == errSecNoSuchAttr)
            let attribute = KeychainDiagnostics.lastFailureDescription ?? ""
            #expect(attribute.contains("kSecAttrServer"), "\(attribute)")
            #expect(attribute.contains("kSecClassGenericPassword"), "\(attribute)")
            #expect(!attribute.contains("'srvr'") && !attribute.contains("'genp'"), "\(attribute)")

            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secAdd(genp()) == errSecDuplicateItem)
            let duplicate = KeychainDiagnostics.lastFailureDescription ?? ""
            #expect(duplicate.contains("kSecAttrService") && duplicate.contains("kSecAttrAccount"), "\(duplicate)")
            #expect(duplicate.contains("kSecClassGenericPassword"), "\(duplicate)")
            for code in ["musr", "vwht", "tkid", "svce", "acct", "genp"] {
                #expect(!duplicate.contains(code), "\(duplicate) lists the internal code \(code)")
            }

            #expect(secAdd(inet().with(kSecAttrCreationDate, "yesterday")) == errSecParam)
            let value = KeychainDiagnostics.lastFailureDescription ?? ""
            #expect(value.contains("kSecAttrCreationDate") && !value.contains("'cdat'"), "\(value)")

            #expect(secUpdate(genp(), [kSecReturnData as String: true]) == errSecNoSuchAttr)
            let update = KeychainDiagnostics.lastFailureDescription ?? ""
            #expect(update.contains("kSecReturnData") && !update.contains("'r_Data'"), "\(update)")

            #expect(secUpdate(genp(), [kSecAttrServer as String: "example.com"]) == errSecNoSuchAttr)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("kSecAttrServer is not an attribute of kSecClassGenericPassword") == true)

            // A key that is no constant at all is still quoted as written.
            #expect(secAdd(genp().with(["bogu": "x"])) == errSecNoSuchAttr)
            #expect(KeychainDiagnostics.lastFailureDescription?.contains("'bogu'") == true)
        }
    }
    /// Every attribute of every stored class, and every class and accessibility, has its
    /// constant's name, so no diagnostic falls back to a raw code.
    @Test func everyCodeHasAName() {
        for itemClass in [ItemClass.genericPassword, .internetPassword, .certificate, .key] {
            #expect(!ConstantNames.itemClass(itemClass.rawValue).hasPrefix("'"))
            for tag in itemClass.schema?.attributes.keys.sorted() ?? [] {
                #expect(!ConstantNames.key(tag, itemClass: itemClass.rawValue).hasPrefix("'"), "\(tag) of \(itemClass.rawValue)")
            }
        }
        for protection in ProtectionClass.allCases {
            #expect(ConstantNames.protection(protection.rawValue).hasPrefix("kSecAttrAccessible"))
        }
        #expect(ConstantNames.key("type", itemClass: "keys") == "kSecAttrKeyType")
        #expect(ConstantNames.key("type", itemClass: "genp") == "kSecAttrType")
    }
}
}
