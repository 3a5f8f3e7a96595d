import Foundation
import Keysmith
import Testing

struct RetrievalKeyLookupTraceTests {
    @Test func explainListsPriorityCandidatesEveryStepAndTheWinner() throws {
        let keychain = RetrievalCountingSource(.keychain, [:], description: "Keychain")
        let config = RetrievalCountingSource(
            .configFile, ["api_key": [("2024.06.01", "x")]], description: "ConfigFile(plist)")
        let retriever = makeRetrievalRetriever([keychain, config])
        let trace = retriever.explain("apiKey")
        #expect(trace.priority == KeySourceKind.defaultPriority)
        #expect(trace.candidates == ["apiKey", "apikey", "APIKEY", "api_key"])
        #expect(trace.steps.count == 8)
        #expect(trace.steps.prefix(4).allSatisfy { $0.source == .keychain })
        #expect(trace.steps.map(\.candidate) == trace.candidates + trace.candidates)
        let last = try #require(trace.steps.last)
        guard case .hit(let selected, let versions) = last.outcome else {
            Issue.record("last step should be a hit: \(last)")
            return
        }
        #expect(selected == "2024.06.01")
        #expect(versions == ["2024.06.01"])
        #expect(trace.winner?.sourceDescription == "ConfigFile(plist)")
        #expect(trace.winner?.matchedName == "api_key")
        #expect(trace.winner?.version == "2024.06.01")
        #expect(trace.steps.allSatisfy { $0.duration >= .zero })
        let text = trace.description
        #expect(text.contains("priority: Keychain > ConfigFile > Environment > Compiled > Remote"))
        #expect(text.contains("=> ConfigFile(plist) \"api_key\" version 2024.06.01"))
    }

    @Test func explainNeitherReadsNorChangesTheCache() throws {
        let source = RetrievalCountingSource(.keychain, ["k": [("1", "v")]])
        let retriever = makeRetrievalRetriever([source])
        #expect(retriever.explain("k").wasCached == false)
        #expect(retriever.cachedKeyCount == 0)
        _ = try retriever.retrieve("k")
        source.resetLookups()
        let trace = retriever.explain("k")
        #expect(trace.wasCached)
        #expect(source.lookups == ["k"])
    }

    @Test func skippedFailedAndRefusedStepsAreRecorded() {
        let environment = EnvironmentKeySource(prefix: "XY", environment: ["XY_DB_KEY": "plain"])
        let compiled = RetrievalCountingSource(.compiled, ["db_key": [("1", "plain")]])
        let retriever = makeRetrievalRetriever(
            [RetrievalFailingSource(kind: .keychain), environment, compiled], environment: .release,
            policy: KeyPolicy(sensitive: ["other"]))
        let trace = retriever.explain("db_key")
        let outcomes = trace.steps.map(\.outcome.description)
        #expect(outcomes.first?.hasPrefix("FAILED") == true)
        #expect(outcomes.contains { $0.hasPrefix("skipped") })
        #expect(trace.hints.contains { $0.contains("release builds") })
        #expect(trace.hints.contains { $0.contains("failed") })

        retriever.setPolicy(KeyPolicy(sensitive: ["db_key"]))
        let refused = retriever.explain("db_key")
        guard case .failed(let error) = refused.result else {
            Issue.record("expected a failure: \(refused)")
            return
        }
        #expect(error is KeyRetrievalError)
        #expect(refused.isSensitive)
    }

    @Test func refusalIsRecordedAsAStep() {
        let config = RetrievalCountingSource(.configFile, ["db_key": [("1", "plain")]])
        let retriever = makeRetrievalRetriever(
            [config], environment: .release, policy: KeyPolicy(sensitive: ["db_key"]))
        let trace = retriever.explain("db_key")
        #expect(trace.steps.last?.outcome.description.hasPrefix("REFUSED") == true)
    }

    @Test func hintsForAReversedPriorityAndForMisses() throws {
        let retriever = makeRetrievalRetriever(
            [RetrievalCountingSource(.keychain, [:])], priority: [.configFile, .keychain])
        let trace = retriever.explain("nothing")
        #expect(trace.hints.contains { $0.contains("Keychain is not consulted first") })
        #expect(trace.hints.contains { $0.contains("audit()") })
        guard case .notFound = trace.result else {
            Issue.record("expected not found")
            return
        }
    }

    @Test func versionRequestsAreExplained() {
        let source = RetrievalCountingSource(.keychain, ["k": [("1", "a"), ("2", "b")]])
        let retriever = makeRetrievalRetriever([source])
        let trace = retriever.explain("k", minVersion: "3")
        #expect(trace.request == .minimum("3"))
        #expect(trace.steps.first?.outcome.description.hasPrefix("no matching version") == true)
        #expect(trace.hints.contains { $0.contains("requested version") })
        #expect(retriever.explain("k", version: "1").winner?.version == "1")
    }

    @Test func loggingReportsSourceAndVersionOnlyOnResolution() throws {
        let collector = RetrievalLogCollector()
        let retriever = KeyRetriever(
            sources: [
                RetrievalCountingSource(.configFile, ["api_key": [("builtin", "x")]], description: "ConfigFile(plist)")
            ],
            environment: .debug, logging: collector.logging, notificationCenter: nil)
        _ = try retriever.retrieve("api_key")
        _ = try retriever.retrieve("api_key")  // cached: not logged
        _ = try retriever.retrieve("missing")
        let lines = collector.events.map(\.description)
        #expect(lines.count == 2)
        #expect(lines.first == "[KeyRetriever] api_key loaded from ConfigFile(plist), version=builtin [debug]")
        #expect(lines.last?.contains("WARNING: missing not found") == true)
    }

    @Test func automaticLoggingIsOffInRelease() {
        #expect(RetrieverLogging.automatic.isActive(isRelease: false))
        #expect(!RetrieverLogging.automatic.isActive(isRelease: true))
        #expect(!RetrieverLogging.disabled.isActive(isRelease: false))
    }
}
