// docker-credential-keysmith: Docker's credential helper over the keychain. Everything lives
// in KeysmithCredentialHelpers; this file only runs it.
import Foundation
import KeysmithCredentialHelpers

let arguments = Array(CommandLine.arguments.dropFirst())
// Only the actions that read standard input wait for it.
let readsInput = arguments.count == 1 && ["store", "get", "erase"].contains(arguments[0])
if readsInput {
    exit(HelperProcess.main { DockerCredentialHelper.run(arguments: arguments, input: $0) })
}
var result = DockerCredentialHelper.run(arguments: arguments, input: Data())
FileHandle.standardOutput.write(result.standardOutput)
result.clear()
exit(result.status)
