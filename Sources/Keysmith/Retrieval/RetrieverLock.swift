// The retriever's one lock. The platform choice is made here and nowhere else: Mutex
// (Synchronization) needs iOS 18 / macOS 15, above this package's deployment targets, so
// Apple platforms use OSAllocatedUnfairLock (iOS 16 / macOS 13) and Linux uses Mutex.
#if canImport(os)
    import os

    /// A lock around a value of type `State`.
    final class RetrieverLock<State: Sendable>: @unchecked Sendable {
        private let lock: OSAllocatedUnfairLock<State>

        init(_ initialState: State) {
            lock = OSAllocatedUnfairLock(uncheckedState: initialState)
        }

        /// Runs `body` with exclusive access to the state.
        @inline(__always)
        func withLock<R: Sendable>(_ body: (inout State) throws -> R) rethrows -> R {
            try lock.withLockUnchecked(body)
        }
    }
#else
    import Synchronization

    /// A lock around a value of type `State`.
    final class RetrieverLock<State: Sendable>: @unchecked Sendable {
        private let mutex: Mutex<State>

        init(_ initialState: State) {
            mutex = Mutex(initialState)
        }

        /// Runs `body` with exclusive access to the state.
        @inline(__always)
        func withLock<R: Sendable>(_ body: (inout State) throws -> R) rethrows -> R {
            try mutex.withLock { state in try body(&state) }
        }
    }
#endif
