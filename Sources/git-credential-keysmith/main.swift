// git-credential-keysmith: git's credential helper over the keychain. Everything lives in
// KeysmithCredentialHelpers; this file only runs it.
import Foundation
import KeysmithCredentialHelpers

let action = CommandLine.arguments.dropFirst().first
if action == nil {
    FileHandle.standardError.write(Data((GitCredentialHelper.usage + "\n").utf8))
    exit(1)
}
exit(HelperProcess.main { GitCredentialHelper.run(action: action, input: $0) })
