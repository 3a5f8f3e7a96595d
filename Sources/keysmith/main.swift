// keysmith: the command-line tool. Everything lives in KeysmithCLI; this file only runs it.
import Foundation
import KeysmithCLI

exit(KeysmithCommandLine.run(CommandLine.arguments))
