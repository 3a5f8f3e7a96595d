#if !canImport(Security)
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The rollback anchor's TPM NV counter (TPM key store only; see ``TPM2RollbackCounter``).
///
/// The anchor records the counter's value; the TPM's counter only goes up. The order of a
/// step keeps every crash recoverable: the anchor is written (synced) with the value the
/// counter is about to reach, *then* the counter is incremented. So the anchor in place
/// always records the TPM's value or one more (an increment that did not happen), and that
/// is what is accepted; an anchor that records less is older than the counter: refused.
extension KeychainDatabase {
    /// Whether a write starts a new epoch of the counter: the anchor is not bound yet, a
    /// protection record changed, or the last increment is ``TPM2RollbackCounter/epochSeconds``
    /// old (or in the future: a clock set back).
    static func needsIncrement(_ binding: RollbackAnchor.CounterBinding?, protectionChanged: Bool) -> Bool {
        guard let binding else { return true }
        if protectionChanged { return true }
        let now = Int64(time(nil))
        return now < binding.incrementedAt || now - binding.incrementedAt >= TPM2RollbackCounter.epochSeconds
    }

    /// Increments the counter the anchor is bound to (binding it first when it is not):
    /// `record` writes the anchor with the binding it is given, before the increment (and
    /// again after it, should the counter have reached another value). Under the write lock.
    /// - Throws: errSecDecode when the anchor is older than the counter.
    func advanceCounter(
        _ counter: TPM2RollbackCounter, from binding: RollbackAnchor.CounterBinding?, anchor: RollbackAnchor,
        record: (RollbackAnchor.CounterBinding) throws -> Void
    ) throws -> RollbackAnchor.CounterBinding {
        if let binding {
            let value = try judge(binding, counter: counter, anchor: anchor)
            // An anchor one ahead of the TPM records an increment a crash interrupted: every
            // state written since records that value too, so the counter must pass it (two
            // increments), not only reach it, or copies of that epoch would outlive this one.
            return try increment(counter, handle: binding.handle, to: max(value, binding.value) &+ 1, record: record)
        }
        let (handle, value) = try counter.bind()
        return try increment(counter, handle: handle, to: value &+ 1, record: record)
    }

    /// For an accepted restore (`keychain.anchor.reset`): binds the anchor to the counter as
    /// it is now, incremented. The counter `previous` names is used when it is still this
    /// keychain's; otherwise the keychain's counter is found or defined again.
    func rebindCounter(
        _ counter: TPM2RollbackCounter, previous: RollbackAnchor.CounterBinding?, anchor: RollbackAnchor,
        record: (RollbackAnchor.CounterBinding) throws -> Void
    ) throws -> RollbackAnchor.CounterBinding {
        // Any anchor written before records at most the counter's value plus one (an
        // increment a crash interrupted): two increments make every one of them older.
        if let previous, let value = try? counter.read(handle: previous.handle) {
            return try increment(counter, handle: previous.handle, to: value &+ 2, record: record)
        }
        let (handle, value) = try counter.bind()
        return try increment(counter, handle: handle, to: value &+ 2, record: record)
    }

    /// Writes the anchor with `target` (through `record`), then increments the counter until
    /// it holds `target` (once; twice after an interrupted increment, and for a reset).
    private func increment(
        _ counter: TPM2RollbackCounter, handle: UInt32, to target: UInt64,
        record: (RollbackAnchor.CounterBinding) throws -> Void
    ) throws -> RollbackAnchor.CounterBinding {
        var binding = RollbackAnchor.CounterBinding(handle: handle, value: target, incrementedAt: Int64(time(nil)))
        try record(binding)
        CrashPoint.reach("tpm-counter-before-increment")
        var reached = try counter.increment(handle: handle)
        while reached < target {
            // Killed here: the anchor is one ahead of the counter, which is accepted.
            CrashPoint.reach("tpm-counter-between-increments")
            reached = try counter.increment(handle: handle)
        }
        CrashPoint.reach("tpm-counter-after-increment")
        if reached != binding.value {
            // Someone else incremented this keychain's counter meanwhile (nothing of
            // Keysmith's does outside the write lock): the anchor follows the counter.
            binding.value = reached
            try record(binding)
        }
        return binding
    }

    /// The TPM counter's value, when the anchor's binding accepts it (the same value, or one
    /// less: an increment that did not happen).
    /// - Throws: errSecDecode when the anchor is older than the counter (or ahead of it, or
    ///   its counter is gone).
    private func judge(_ binding: RollbackAnchor.CounterBinding, counter: TPM2RollbackCounter, anchor: RollbackAnchor) throws -> UInt64 {
        let value: UInt64
        do {
            value = try counter.read(handle: binding.handle)
        } catch let unusable as TPM2RollbackCounter.CounterUnusable {
            throw anchor.rolledBack("its anchor is bound to a TPM counter that cannot be checked: \(unusable.reason).")
        }
        if binding.value == value || binding.value == value &+ 1 { return value }
        let index = TPM2RollbackCounter.hexadecimal(binding.handle)
        if binding.value < value {
            throw anchor.rolledBack(
                "it is an older copy: its anchor records the TPM counter (NV index \(index)) at \(binding.value), and the TPM's counter is at \(value) (the keychain's files were put back from an earlier copy).")
        }
        throw anchor.rolledBack(
            "its anchor records the TPM counter (NV index \(index)) at \(binding.value), ahead of the TPM's \(value) (an anchor from another TPM, or the TPM was cleared).")
    }

    /// At open: the anchor against the TPM counter. The anchor is read before and after the
    /// TPM (another process may advance both in between); after a few tries with writers in
    /// the way, under the write lock.
    ///
    /// An anchor one ahead of the counter, under the write lock, records an increment that a
    /// crash (or a TPM error) interrupted: it is completed here, so that copies from the
    /// epoch before stop being accepted now rather than at the next epoch.
    /// - Throws: errSecDecode when the anchor is older than the counter, or has no counter
    ///   while the keychain has one on the TPM (an anchor from before the counter put back).
    func checkCounter(_ counter: TPM2RollbackCounter, anchor: RollbackAnchor) throws {
        /// Whether the anchor is accepted one ahead of the counter.
        func judge(_ contents: RollbackAnchor.Contents?) throws -> Bool {
            guard let contents else {
                // No anchor, which the database check accepts only for a keychain never
                // anchored (no state record either). With a counter on the TPM it was
                // anchored: an older database with its anchor and state record removed.
                if let found = try counter.find() {
                    throw anchor.rolledBack(
                        "its anchor file \(RollbackAnchor.fileName) is missing and the database has no state record, as if it had never been anchored, but this keychain's counter exists on the TPM (NV index \(TPM2RollbackCounter.hexadecimal(found.handle)), at \(found.value)): the anchor and the state record were removed, or the keychain's creation was interrupted.")
                }
                return false
            }
            if let binding = contents.counter {
                return try self.judge(binding, counter: counter, anchor: anchor) != binding.value
            } else if let found = try counter.find() {
                throw anchor.rolledBack(
                    "its anchor is not bound to the TPM counter, but this keychain's counter exists on the TPM (NV index \(TPM2RollbackCounter.hexadecimal(found.handle)), at \(found.value)): an anchor from before the counter was put back.")
            }
            return false
        }
        var ahead: Bool?
        for _ in 0..<3 where ahead == nil {
            // A failed read may be a write seen half-way: judged under the lock below.
            guard let before = try? anchor.read() else { break }
            let outcome = Result { try judge(before) }
            guard let after = try? anchor.read(), after == before else { continue }
            ahead = try outcome.get()
        }
        guard ahead != false else { return }
        try database.writeTransaction {
            let contents = try anchor.read()
            guard try judge(contents), let binding = contents?.counter else { return }
            // No writer is half-way (the lock is held), so the increment was interrupted.
            // Completing it is best effort: the keychain opens either way.
            _ = try? counter.increment(handle: binding.handle)
        }
    }
}
#endif
