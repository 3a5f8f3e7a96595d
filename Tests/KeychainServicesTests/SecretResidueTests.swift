// A secret passed to SecItemAdd or SecItemUpdate leaves no copy in the process's memory
// once the call returns and the caller has wiped its own buffer: the engine copies the
// caller's bytes once, into a buffer it zeroes. Checked by scanning every readable mapping
// of the process (/proc/self/maps, /proc/self/mem) for a 5 KiB random canary.
import Foundation
import KeychainServices
import Testing

#if os(Linux)
/// Counts occurrences of a needle in the process's readable memory. The needle is kept
/// masked (each byte XOR 0x5A) so the scanner itself holds no plain copy of it; its
/// buffers are allocated up front and it allocates nothing while scanning, so the scan
/// does not reuse (and overwrite) the freed blocks it is looking into.
final class MemoryScanner {
    private let masked: UnsafeMutableRawBufferPointer
    private let chunk: UnsafeMutableRawBufferPointer
    private let maps: UnsafeMutableRawBufferPointer
    private static let mask: UInt8 = 0x5A
    private static let chunkSize = 1 << 20

    init(needle: UnsafeRawBufferPointer) {
        masked = .allocate(byteCount: needle.count, alignment: 16)
        for index in 0..<needle.count { masked[index] = needle[index] ^ Self.mask }
        chunk = .allocate(byteCount: Self.chunkSize + needle.count, alignment: 16)
        maps = .allocate(byteCount: 4 << 20, alignment: 16)
    }

    deinit {
        chunk.initializeMemory(as: UInt8.self, repeating: 0)
        masked.deallocate()
        chunk.deallocate()
        maps.deallocate()
    }

    /// How many times the needle lies in readable memory right now (-1: cannot scan).
    func occurrences() -> Int {
        let mapsFD = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
        guard mapsFD >= 0 else { return -1 }
        var mapsLength = 0
        while mapsLength < maps.count {
            let count = read(mapsFD, maps.baseAddress! + mapsLength, maps.count - mapsLength)
            if count <= 0 { break }
            mapsLength += count
        }
        close(mapsFD)
        let fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        var found = 0
        var lineStart = 0
        while lineStart < mapsLength {
            var lineEnd = lineStart
            while lineEnd < mapsLength && maps[lineEnd] != 0x0A { lineEnd += 1 }
            if let (start, end) = readableRange(lineStart, lineEnd) { found += scan(fd, from: start, to: end) }
            lineStart = lineEnd + 1
        }
        chunk.initializeMemory(as: UInt8.self, repeating: 0)
        return found
    }

    /// Parses `start-end perms ... [name]` from the maps line; nil unless readable and
    /// an ordinary mapping.
    private func readableRange(_ from: Int, _ to: Int) -> (UInt64, UInt64)? {
        var index = from
        func hex() -> UInt64 {
            var value: UInt64 = 0
            while index < to {
                let byte = maps[index]
                let digit: UInt8
                switch byte {
                case 0x30...0x39: digit = byte - 0x30
                case 0x61...0x66: digit = byte - 0x61 + 10
                default: return value
                }
                value = value << 4 | UInt64(digit)
                index += 1
            }
            return value
        }
        let start = hex()
        index += 1  // '-'
        let end = hex()
        index += 1  // ' '
        guard index < to, maps[index] == UInt8(ascii: "r") else { return nil }
        // Unreadable special pages ([vvar], [vsyscall]) fail the read and are skipped.
        return (start, end)
    }

    private func scan(_ fd: Int32, from start: UInt64, to end: UInt64) -> Int {
        let overlap = masked.count - 1
        var offset = start
        var carried = 0
        var found = 0
        while offset < end {
            let length = Int(min(UInt64(Self.chunkSize), end - offset))
            let count = pread(fd, chunk.baseAddress! + carried, length, off_t(Int64(bitPattern: offset)))
            if count <= 0 { break }
            let available = carried + count
            found += matches(available)
            // Keep the last needle-length-minus-one bytes, so a copy across chunks is found.
            let keep = min(overlap, available)
            memmove(chunk.baseAddress!, chunk.baseAddress! + available - keep, keep)
            memset(chunk.baseAddress! + keep, 0, chunk.count - keep)
            carried = keep
            offset += UInt64(count)
        }
        memset(chunk.baseAddress!, 0, chunk.count)
        return found
    }

    private func matches(_ available: Int) -> Int {
        let length = masked.count
        guard available >= length else { return 0 }
        let first = Int32(masked[0] ^ Self.mask)
        var found = 0
        var index = 0
        let last = available - length
        while index <= last {
            guard let hit = memchr(chunk.baseAddress! + index, first, last - index + 1) else { break }
            let position = UnsafeRawPointer(chunk.baseAddress!).distance(to: UnsafeRawPointer(hit))
            var equal = true
            var offset = 1
            while offset < length {
                if chunk[position + offset] ^ Self.mask != masked[offset] { equal = false; break }
                offset += 1
            }
            if equal { found += 1 }
            index = position + 1
        }
        return found
    }
}

/// A caller's secret in a buffer the caller wipes itself, handed over as `NSData` without
/// a copy (as an app holding its key in locked memory would).
final class CallerSecret {
    let buffer: UnsafeMutableRawBufferPointer

    init(count: Int) {
        buffer = .allocate(byteCount: count, alignment: 16)
        var generator = SystemRandomNumberGenerator()
        for index in 0..<count { buffer[index] = UInt8.random(in: 0...255, using: &generator) }
        buffer[0] = 0xA7  // never zero, so wiped memory never matches
    }

    func data() -> NSData {
        NSData(bytesNoCopy: buffer.baseAddress!, length: buffer.count, freeWhenDone: false)
    }

    /// The secret without its first and last 512 bytes: a freed block's first bytes are
    /// overwritten by the allocator's own bookkeeping, so a lingering copy is found by
    /// its middle.
    var middle: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[512..<(buffer.count - 512)])
    }

    func wipe() { buffer.initializeMemory(as: UInt8.self, repeating: 0) }

    deinit {
        wipe()
        buffer.deallocate()
    }
}

struct SecretResidueTests {
    @Test func addAndUpdateLeaveNoCopyOfTheSecretInMemory() {
        TemporaryKeychain.with { _ in
            // Open the keychain first, so its one-time allocations are not part of the count.
            _ = SecItemCopyMatching(genp("residue", "warm-up") as CFDictionary, nil)

            let added = CallerSecret(count: 5 * 1024)
            let scanner = MemoryScanner(needle: added.middle)
            // No expectation is recorded between a call and the scans: its allocations could
            // reuse the very blocks the scan looks into.
            func add() -> OSStatus {
                let query = genp("residue", "a").with(kSecValueData, added.data())
                return SecItemAdd(query as CFDictionary, nil)
            }
            let addStatus = add()
            let whileHeld = scanner.occurrences()
            added.wipe()
            let afterAdd = scanner.occurrences()
            #expect(addStatus == errSecSuccess)
            #expect(whileHeld == 1, "only the caller's own buffer holds the secret")
            #expect(afterAdd == 0, "copies of the added secret are left in memory")

            let updated = CallerSecret(count: 5 * 1024)
            let updateScanner = MemoryScanner(needle: updated.middle)
            func update() -> OSStatus {
                let changes = [kSecValueData as String: updated.data()] as [String: Any]
                return SecItemUpdate(genp("residue", "a") as CFDictionary, changes as CFDictionary)
            }
            let updateStatus = update()
            updated.wipe()
            let afterUpdate = updateScanner.occurrences()
            #expect(updateStatus == errSecSuccess)
            #expect(afterUpdate == 0, "copies of the updated secret are left in memory")
            #expect(SecItemDelete(genp("residue", "a") as CFDictionary) == errSecSuccess)
        }
    }
}
#endif
