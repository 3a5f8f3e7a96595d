import Foundation
import KeysmithCLI
import Testing

/// The pure pieces of Output: tables, JSON text, captured sinks.
struct OutputTests {
    @Test func keyValueTableAlignsValues() {
        var table = KeyValueTable()
        table.add("service", "api")
        table.add("access group", "keysmith.cli")
        #expect(table.lines() == ["service       api", "access group  keysmith.cli"])
        #expect(table.lines(indent: 2).allSatisfy { $0.hasPrefix("  ") })
    }

    @Test func columnTableAlignsColumnsAndTrimsTrailingSpace() {
        var table = ColumnTable(headers: ["CLASS", "NAME", "GROUP"])
        table.add(["genp", "api.example.com", "keysmith.cli"])
        table.add(["inet", "git", ""])
        #expect(table.lines() == [
            "CLASS  NAME             GROUP",
            "genp   api.example.com  keysmith.cli",
            "inet   git",
        ])
    }

    @Test func jsonTextIsSortedAndStable() {
        let text = JSONText.render(["b": 1, "a": ["z": true, "y": "x/y"]] as [String: Any])
        #expect(text == "{\n  \"a\" : {\n    \"y\" : \"x/y\",\n    \"z\" : true\n  },\n  \"b\" : 1\n}")
        #expect(JSONText.render(["bad": Date()]) == "null")
    }

    @Test func quietKeepsDataAndErrorsButDropsInformation() {
        let out = BufferSink()
        let err = BufferSink()
        let output = Output(standardOutput: out, standardError: err, quiet: true)
        output.info("informational")
        output.data("data")
        output.writeSecret(Data("asked-for".utf8))
        output.error("an error")
        output.flush()
        #expect(out.text == "data\nasked-for\n")
        #expect(err.text == "an error\n")
    }

    @Test func progressIsNeverDrawnOffATerminal() {
        let err = BufferSink()
        let output = Output(standardOutput: BufferSink(), standardError: err)
        let progress = output.progress("Reading", total: 10)
        #expect(!progress.isVisible)
        progress.update(5)
        progress.finish()
        #expect(err.bytes.isEmpty)
    }

    @Test func inProcessRunWithCapturedOutputPrintsHelp() {
        let out = BufferSink()
        let err = BufferSink()
        let status = KeysmithCommandLine.run(
            ["keysmith", "help"], environment: [:], output: Output(standardOutput: out, standardError: err),
            secretInput: SecretInput(readAllStandardInput: { nil }, standardInputIsTerminal: { false }))
        #expect(status == 0)
        #expect(out.text.contains("Exit status:"))
        #expect(err.text.isEmpty)
    }
}
