// The memory scan of `keychain-workload residue`: a canary secret handed to SecItemAdd and
// SecItemUpdate, and a scan of this process's memory for copies of it afterwards. It runs in
// a process of its own because reading /proc/self/mem holds up every other thread of the
// process while it reads.
#if os(Linux)
import Foundation
import KeychainServices

/// Counts occurrences of a needle in the process's readable memory. The needle is kept
/// masked (each byte XOR 0x5A) so the scanner itself holds no plain copy of it; its
/// buffers are allocated up front and it allocates nothing while scanning, so the scan
/// does not reuse (and overwrite) the freed blocks it is looking into.
final class MemoryScanner {
    private let masked: UnsafeMutableRawBufferPointer
    private let chunk: UnsafeMutableRawBufferPointer
    private let maps: UnsafeMutableRawBufferPointer
    private let residency: UnsafeMutableRawBufferPointer
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    private static let mask: UInt8 = 0x5A
    private static let chunkSize = 1 << 20

    init(needle: UnsafeRawBufferPointer) {
        masked = .allocate(byteCount: needle.count, alignment: 16)
        for index in 0..<needle.count { masked[index] = needle[index] ^ Self.mask }
        chunk = .allocate(byteCount: Self.chunkSize + needle.count, alignment: 16)
        maps = .allocate(byteCount: 4 << 20, alignment: 16)
        residency = .allocate(byteCount: Self.chunkSize / Self.pageSize + 1, alignment: 16)
    }

    deinit {
        chunk.initializeMemory(as: UInt8.self, repeating: 0)
        masked.deallocate()
        chunk.deallocate()
        residency.deallocate()
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

    /// Parses `start-end perms ... [path]` from the maps line; nil unless readable and not
    /// a read-only file mapping.
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
        // Not read-only mappings of files (code and constant data of libraries, most of
        // the address space): a copy the program made cannot lie there.
        guard index < to, maps[index] == UInt8(ascii: "r") else { return nil }
        var slash = index
        while slash < to && maps[slash] != UInt8(ascii: "/") { slash += 1 }
        if slash < to, maps[index + 1] != UInt8(ascii: "w") { return nil }
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
            // Pages never touched (most of the stacks and reservations) cannot hold a copy:
            // a chunk with no page in memory is skipped without reading it.
            if !anyResident(offset, length) {
                memset(chunk.baseAddress!, 0, chunk.count)
                carried = 0
                offset += UInt64(length)
                continue
            }
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

    private func anyResident(_ address: UInt64, _ length: Int) -> Bool {
        guard let pointer = UnsafeMutableRawPointer(bitPattern: UInt(address)) else { return true }
        let pages = (length + Self.pageSize - 1) / Self.pageSize
        guard mincore(pointer, length, residency.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0 else { return true }
        for page in 0..<pages where residency[page] & 1 != 0 { return true }
        return false
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

/// What one run saw: statuses and how many copies each scan found.
struct ResidueObservation {
    var addStatus: OSStatus = 0
    var whileHeld = 0
    var afterAdd = 0
    var updateStatus: OSStatus = 0
    var afterUpdate = 0
    var deleteStatus: OSStatus = 0

    /// One line per figure, `name value`.
    var lines: [String] {
        ["add \(addStatus)", "held \(whileHeld)", "after-add \(afterAdd)", "update \(updateStatus)",
         "after-update \(afterUpdate)", "delete \(deleteStatus)"]
    }
}

func genp(_ service: String, _ account: String) -> [String: Any] {
    [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
}

/// Adds and updates an item with canary secrets of `size` bytes and scans memory after
/// each call. Nothing is allocated between a call and its scans that could reuse (and
/// overwrite) the blocks the scan looks into.
func observeResidue(size: Int) -> ResidueObservation {
    var seen = ResidueObservation()
    // Open the keychain first, so its one-time allocations are not part of the count.
    _ = SecItemCopyMatching(genp("residue", "warm-up") as CFDictionary, nil)

    let added = CallerSecret(count: size)
    let scanner = MemoryScanner(needle: added.middle)
    func add() -> OSStatus {
        var query = genp("residue", "a")
        query[kSecValueData as String] = added.data()
        return SecItemAdd(query as CFDictionary, nil)
    }
    seen.addStatus = add()
    seen.whileHeld = scanner.occurrences()
    added.wipe()
    seen.afterAdd = scanner.occurrences()

    let updated = CallerSecret(count: size)
    let updateScanner = MemoryScanner(needle: updated.middle)
    func update() -> OSStatus {
        let changes = [kSecValueData as String: updated.data()] as [String: Any]
        return SecItemUpdate(genp("residue", "a") as CFDictionary, changes as CFDictionary)
    }
    seen.updateStatus = update()
    updated.wipe()
    seen.afterUpdate = updateScanner.occurrences()
    seen.deleteStatus = SecItemDelete(genp("residue", "a") as CFDictionary)
    return seen
}
#endif
