// The read path's shortcuts give exactly what the general code gives, on the same inputs.
import Foundation
@testable import KeychainServices
import Testing

struct ReadPathTests {
    /// The general reading of a `pdmn` label: split at "@", then the accessibility and the
    /// machine tag checked (what `KeyHierarchy.protection(forLabel:)` does for any label).
    private func generalProtection(_ label: String, machineTag: String) -> Result<ProtectionClass?, KeyHierarchy.ForeignItem> {
        let parts = label.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let protection = ProtectionClass(rawValue: String(parts[0])) else { return .success(nil) }
        if protection.isThisDeviceOnly {
            guard parts.count == 2 else { return .success(nil) }
            if parts[1] != machineTag { return .failure(KeyHierarchy.ForeignItem()) }
        } else if parts.count != 1 {
            return .success(nil)
        }
        return .success(protection)
    }

    @Test func labelsReadAsTheGeneralReadingReadsThem() throws {
        let keys = try KeyHierarchy(deviceKey: SecretKey.random())
        var labels = ["", "@", "x", "zz", "AK", "ak ", " ak", "a", "akp", "akpuu", "f@", "@ak", "\0ak", "ak\0",
                      "akpuakpuakpu", "\u{212A}", "a\u{0301}k", "dk\u{0301}"]
        for protection in ProtectionClass.allCases {
            let name = protection.rawValue
            labels += [name, name + "@", name + "@" + keys.machineTag, name + "@0000000000000000",
                       name + "@" + keys.machineTag + "@", name + "@@", name + "x"]
        }
        for label in labels {
            let general = generalProtection(label, machineTag: keys.machineTag)
            switch general {
            case .success(let expected):
                #expect(try keys.protection(forLabel: label) == expected, "\(label)")
            case .failure:
                #expect(throws: KeyHierarchy.ForeignItem.self, "\(label)") { try keys.protection(forLabel: label) }
            }
        }
    }
}
