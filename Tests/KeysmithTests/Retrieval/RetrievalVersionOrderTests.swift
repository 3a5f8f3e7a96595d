// Versions compare as people read them: runs of digits as numbers, segment by segment, a
// leading "v" ignored, whatever separators the scheme uses.
import Foundation
import Keysmith
import Testing

/// `versions` are in ascending order: every earlier one is older than every later one.
private func expectAscending(_ versions: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    for (i, older) in versions.enumerated() {
        for newer in versions[(i + 1)...] {
            #expect(KeyVersion(older) < KeyVersion(newer), "\(older) < \(newer)", sourceLocation: sourceLocation)
            #expect(!(KeyVersion(newer) < KeyVersion(older)), "\(newer) < \(older)", sourceLocation: sourceLocation)
        }
    }
    // Sorting any permutation gives the same order.
    #expect(versions.reversed().map(KeyVersion.init).sorted().map(\.rawValue) == versions, sourceLocation: sourceLocation)
}

struct RetrievalVersionOrderTests {
    @Test func vNumbers_compareAsNumbers() {
        expectAscending(["v1", "v2", "v9", "v10", "v11", "v100"])
        #expect(KeyVersion("v2") == KeyVersion("2"))
        #expect(KeyVersion("V10") == KeyVersion("v10"))
        #expect(KeyVersion("v2").isNumeric)
    }

    @Test func dates_inTheCommonSpellings() {
        expectAscending(["2024.06.30", "2024.7.1", "2024.07.02", "2024.10.01", "2025.1.1"])
        expectAscending(["2024-06-30", "2024-07-01", "2024-10-01", "2025-01-01"])
        expectAscending(["20240630", "20240701", "20241001"])
        #expect(KeyVersion("2024-07-01") == KeyVersion("2024.07.01"))
    }

    @Test func semver_withPreReleases() {
        expectAscending(["1.0.0-alpha", "1.0.0-alpha.2", "1.0.0-alpha.10", "1.0.0-beta", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.9.0", "1.10.0", "2.0.0"])
        #expect(KeyVersion("1.2") == KeyVersion("1.2.0"))
        #expect(KeyVersion("1.0.0-RC.1") == KeyVersion("1.0.0-rc.1"))
    }

    @Test func buildNumbers() {
        expectAscending(["9", "10", "99", "100", "1000"])
        expectAscending(["build-9", "build-10", "build-100"])
        expectAscending(["1.2.3", "1.2.3+9", "1.2.3+10"])
    }

    @Test func labelsWithoutDigits_sortBelowEveryVersion() {
        for label in ["builtin", "env", "unknown", "compiled", ""] {
            #expect(!KeyVersion(label).isNumeric, "\(label)")
            #expect(KeyVersion(label) < KeyVersion("0"), "\(label)")
            #expect(KeyVersion(label) < KeyVersion("v1"), "\(label)")
        }
    }

    @Test func longDigitRuns_compareByValue() {
        expectAscending(["18446744073709551615", "18446744073709551616", "99999999999999999999999"])
        #expect(KeyVersion("000123") == KeyVersion("123"))
        #expect(Set(["v10", "10", "10.0", "010"].map(KeyVersion.init)).count == 1)
    }

    @Test func retrieverServesV10_afterV2() throws {
        let json = #"{"db_key": [{"value": "djI=", "version": "v2"}, {"value": "djEw", "version": "v10"}, {"value": "djk=", "version": "v9"}]}"#
        let source = try ConfigFileKeySource(data: Data(json.utf8), format: .json)
        let retriever = makeRetrievalRetriever([source])
        #expect(try retriever.retrieve("db_key")?.version == "v10")
        #expect(try retriever.retrieve("db_key", minVersion: "v3")?.version == "v10")
        #expect(try retriever.retrieve("db_key", version: "10")?.version == "v10")
    }
}
