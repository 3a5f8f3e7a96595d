import Foundation

// Two spellings of one visible name: "jos" + U+00E9 and "jose" + U+0301. Swift's `==` says
// they are equal (canonical equivalence); the keychain says they are two names.

/// "josé" with the precomposed é (U+00E9).
let precomposed = "jos\u{E9}"
/// "josé" as e followed by the combining acute accent (U+0301).
let decomposed = "jose\u{301}"

/// The UTF-8 bytes of each string, for comparisons that Swift's `==` would blur.
func utf8(_ strings: [String]) -> [[UInt8]] {
    strings.map { Array($0.utf8) }
}

/// The UTF-8 bytes of each string, sorted, for comparisons where order does not matter.
func sortedUTF8(_ strings: [String]) -> [[UInt8]] {
    utf8(strings).sorted { $0.lexicographicallyPrecedes($1) }
}
