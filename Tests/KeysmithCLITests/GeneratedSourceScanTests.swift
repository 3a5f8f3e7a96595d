import Foundation
import Testing

/// The leak scan finds a key in each form generated code could hold it in, so a scan that
/// finds nothing means something.
struct GeneratedSourceScanTests {
    static let key = Data("scan-key-0123456789-abcdef".utf8)

    @Test func findsEveryForm() {
        let bytes = Array(Self.key)
        let hexList = bytes.map { "0x" + ($0 < 16 ? "0" : "") + String($0, radix: 16) }
        // The generator's layout: 16 per row, wrapped and indented.
        let wrapped = "bytes: [\n" + stride(from: 0, to: hexList.count, by: 16).map {
            "                    " + hexList[$0..<min($0 + 16, hexList.count)].joined(separator: ", ") + ","
        }.joined(separator: "\n") + "\n                ]"
        let cases: [(String, String)] = [
            ("text", "let k = \"scan-key-0123456789-abcdef\""),
            ("base64", "let k = \"\(Self.key.base64EncodedString())\""),
            ("hex", "let k = \"\(bytes.map { String(format: "%02X", $0) }.joined())\""),
            ("integer list", wrapped),
            ("integer list", "[" + bytes.map(String.init).joined(separator: ",") + "]"),
            ("escaped string literal", "\"" + bytes.map { "\\u{\(String($0, radix: 16))}" }.joined() + "\""),
        ]
        for (form, source) in cases {
            #expect(GeneratedSourceScan.forms(of: Self.key, foundIn: source).contains(form), "\(form) not found")
        }
        #expect(GeneratedSourceScan.forms(of: Self.key, foundIn: "bytes: [0x01, 0x02], salt: [1, 2, 3]").isEmpty)
    }
}
