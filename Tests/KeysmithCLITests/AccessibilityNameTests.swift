// The accessibility names the tool accepts and lists are spelled out (no reflection at
// start-up); they must stay the names of the cases, which is what users type.
@testable import KeysmithCLI
import Testing

struct AccessibilityNameTests {
    @Test func everyNameIsItsCaseName() {
        for accessibility in Accessibility.allCases {
            #expect(accessibility.name == String(describing: accessibility))
            #expect(Accessibility(commandLineFlag: accessibility.name) == accessibility)
        }
    }
}
