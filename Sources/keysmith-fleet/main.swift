// keysmith-fleet: the keysmith tool with the fleet's etcd client linked in. `keysmith` hands
// it the command lines that need etcd (`keysmith fleet …`, `--fleet`); it takes every other
// command as well, as `keysmith` does.
import Foundation
import KeysmithFleetCLI

exit(KeysmithFleetCommandLine.run(CommandLine.arguments))
