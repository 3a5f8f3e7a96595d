import Foundation
import Keysmith
import Testing

struct RetrievalKeyPolicyTests {
    private let policy = KeyPolicy(sensitive: ["db_key"])

    @Test func releaseRefusesASensitiveKeyFromAPlaintextSource() throws {
        let config = RetrievalCountingSource(
            .configFile, ["db_key": [("1", "plaintext")]], description: "ConfigFile(plist)")
        let retriever = makeRetrievalRetriever([config], environment: .release, policy: policy)
        do {
            _ = try retriever.retrieve("db_key")
            Issue.record("expected a policy error")
        } catch let error as KeyRetrievalError {
            guard case .sensitiveKeyInPlaintextSource(let identifier, let matchedName, let source, let location) = error
            else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(identifier == "db_key")
            #expect(matchedName == "db_key")
            #expect(source == .configFile)
            #expect(location.contains("ConfigFile(plist)"))
            #expect(error.description.contains("keychain"))
            #expect(error.description.contains(location))
        }
        #expect(retriever.cachedKeyCount == 0)
    }

    @Test func releaseServesTheKeychainCopyOfASensitiveKey() throws {
        let keychain = RetrievalCountingSource(.keychain, ["db_key": [("1", "secure")]])
        let config = RetrievalCountingSource(.configFile, ["db_key": [("1", "plaintext")]])
        let retriever = makeRetrievalRetriever([keychain, config], environment: .release, policy: policy)
        #expect(try retriever.retrieve("db_key")?.source == .keychain)
    }

    @Test func everyPlaintextKindIsRefused() throws {
        for kind in [KeySourceKind.configFile, .environment, .compiled] {
            let source = RetrievalCountingSource(kind, ["db_key": [("1", "plaintext")]])
            let retriever = makeRetrievalRetriever(
                [source], environment: .release, policy: policy, allowsEnvironmentInRelease: true)
            #expect(throws: KeyRetrievalError.self, "\(kind)") { try retriever.retrieve("db_key") }
        }
    }

    @Test func debugBuildsMayReadSensitiveKeysFromPlaintextUnlessEnforcedAlways() throws {
        let config = RetrievalCountingSource(.configFile, ["db_key": [("1", "plaintext")]])
        let debug = makeRetrievalRetriever([config], environment: .debug, policy: policy)
        #expect(try debug.retrieve("db_key")?.source == .configFile)
        let strict = makeRetrievalRetriever(
            [config], environment: .debug, policy: KeyPolicy(sensitive: ["db_key"], enforcement: .always))
        #expect(throws: KeyRetrievalError.self) { try strict.retrieve("db_key") }
    }

    @Test func sensitivityCoversCandidateSpellings() {
        #expect(policy.isSensitive("db_key"))
        #expect(policy.isSensitive("dbKey"))
        #expect(policy.isSensitive("DB_KEY"))
        #expect(policy.isSensitive("db_key_test"))
        #expect(!policy.isSensitive("db"))
        #expect(!KeyPolicy.none.isSensitive("db_key"))
        #expect(!policy.allows("dbKey", from: .configFile, isRelease: true))
        #expect(policy.allows("dbKey", from: .keychain, isRelease: true))
    }

    @Test func aFailingSourceStopsTheLookupOfASensitiveKey() throws {
        let config = RetrievalCountingSource(.configFile, ["db_key": [("1", "plaintext")]])
        let retriever = makeRetrievalRetriever([RetrievalFailingSource(kind: .keychain), config], policy: policy)
        do {
            _ = try retriever.retrieve("db_key")
            Issue.record("expected an error")
        } catch let error as KeyRetrievalError {
            guard case .sourceFailed(let identifier, let source, _, _) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(identifier == "db_key")
            #expect(source == .keychain)
            #expect(error.description.contains("locked"))
        }
        #expect(config.lookups.isEmpty)
    }

    @Test func environmentIsSkippedInReleaseUnlessAllowed() throws {
        let environment = EnvironmentKeySource(prefix: "XY", environment: ["XY_API_KEY": "from-env"])
        let release = makeRetrievalRetriever([environment], environment: .release)
        #expect(try release.retrieve("api_key") == nil)
        release.setAllowsEnvironmentInRelease(true)
        #expect(release.allowsEnvironmentInRelease)
        #expect(try release.retrieve("api_key")?.string() == "from-env")
        let debug = makeRetrievalRetriever([environment], environment: .debug)
        #expect(try debug.retrieve("api_key")?.source == .environment)
    }

    @Test func changingThePolicyClearsTheCache() throws {
        let config = RetrievalCountingSource(.configFile, ["db_key": [("1", "plaintext")]])
        let retriever = makeRetrievalRetriever([config], environment: .release)
        #expect(try retriever.retrieve("db_key") != nil)
        retriever.setPolicy(policy)
        #expect(retriever.policy == policy)
        #expect(throws: KeyRetrievalError.self) { try retriever.retrieve("db_key") }
    }

    @Test func plaintextKinds() {
        #expect(KeySourceKind.configFile.isPlaintext)
        #expect(KeySourceKind.environment.isPlaintext)
        #expect(KeySourceKind.compiled.isPlaintext)
        #expect(!KeySourceKind.keychain.isPlaintext)
        #expect(!KeySourceKind.remote.isPlaintext)
    }
}
