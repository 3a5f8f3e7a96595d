import Keysmith
import Testing

struct RetrievalKeyVersionTests {
    @Test func comparesNumericallySegmentBySegment() {
        #expect(KeyVersion("2024.7.1") > KeyVersion("2024.6.30"))
        #expect(KeyVersion("2024.10.1") > KeyVersion("2024.9.30"))
        #expect(KeyVersion("10") > KeyVersion("9"))
        // A string comparison gets these wrong.
        #expect("2024.10.1" < "2024.9.30")
    }

    @Test func leadingZerosAndMissingSegmentsDoNotCount() {
        #expect(KeyVersion("2024.07.01") == KeyVersion("2024.7.1"))
        #expect(KeyVersion("2024.7") == KeyVersion("2024.7.0"))
        #expect(KeyVersion("2024.7") < KeyVersion("2024.7.1"))
        #expect(Set([KeyVersion("2024.07.01"), KeyVersion("2024.7.1"), KeyVersion("2024.7.1.0")]).count == 1)
    }

    @Test func labelsSortBelowEveryNumber() {
        for label in ["builtin", "env", "unknown", "compiled", ""] {
            #expect(KeyVersion(label) < KeyVersion("0"), "\(label)")
            #expect(!KeyVersion(label).isNumeric, "\(label)")
        }
        #expect(KeyVersion("builtin") < KeyVersion("env"))
        #expect(KeyVersion("env") == KeyVersion("env"))
        #expect(KeyVersion("env") != KeyVersion("0"))
    }

    @Test func sortingAMixOfVersions() {
        let sorted = ["2024.7.1", "builtin", "2024.06.30", "3", "env", "2024.6.30.1"].map(KeyVersion.init).sorted()
        #expect(sorted.map(\.rawValue) == ["builtin", "env", "3", "2024.06.30", "2024.6.30.1", "2024.7.1"])
    }

    @Test func hugeSegmentsAreVersionsNotCrashes() {
        #expect(KeyVersion("99999999999999999999999").isNumeric)
        #expect(KeyVersion("99999999999999999999999") > KeyVersion("18446744073709551615"))
    }
}
