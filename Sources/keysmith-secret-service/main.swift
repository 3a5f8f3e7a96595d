// keysmith-secret-service: `keysmith secret-service` runs this executable, installed beside
// keysmith. It serves the freedesktop Secret Service on the session bus over the keychain.
import Foundation
import KeysmithSecretService

exit(SecretServiceCommandLine.run(CommandLine.arguments))
