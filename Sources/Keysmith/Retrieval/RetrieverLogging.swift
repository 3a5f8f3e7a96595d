import Foundation

/// Whether and where the retriever logs each resolved lookup (source and version only).
///
/// Logging is switchable: ``automatic`` logs in debug builds and stays
/// silent in release builds; ``disabled`` never logs; ``enabled(_:)`` always logs to your
/// handler (for example a remote-switchable logger). Lookups answered from the cache are
/// not logged, so the cached path stays fast.
///
/// ```swift
/// let logging = RetrieverLogging.enabled { event in logger.info("\(event)") }
/// ```
public struct RetrieverLogging: Sendable {
    /// When to log.
    public enum Mode: Sendable, Hashable {
        /// In debug builds only.
        case automatic
        /// Always.
        case always
        /// Never.
        case never
    }

    /// When to log.
    public var mode: Mode
    /// Where log events go.
    public var handler: @Sendable (KeyLookupEvent) -> Void

    /// Creates a logging configuration.
    /// - Parameters:
    ///   - mode: When to log.
    ///   - handler: Where events go (default: one line on standard error).
    public init(mode: Mode, handler: @escaping @Sendable (KeyLookupEvent) -> Void = RetrieverLogging.standardError) {
        self.mode = mode
        self.handler = handler
    }

    /// Logs to standard error in debug builds; silent in release builds.
    public static let automatic = RetrieverLogging(mode: .automatic)
    /// Never logs.
    public static let disabled = RetrieverLogging(mode: .never)

    /// Always logs, to `handler`.
    /// - Parameter handler: Where events go.
    /// - Returns: The configuration.
    public static func enabled(_ handler: @escaping @Sendable (KeyLookupEvent) -> Void) -> RetrieverLogging {
        RetrieverLogging(mode: .always, handler: handler)
    }

    /// Writes the event's one-line description to standard error.
    /// - Parameter event: The event.
    public static func standardError(_ event: KeyLookupEvent) {
        FileHandle.standardError.write(Data((event.description + "\n").utf8))
    }

    /// Whether events are logged in a build.
    /// - Parameter isRelease: Whether the build is a release build.
    /// - Returns: `true` when the handler is called.
    public func isActive(isRelease: Bool) -> Bool {
        switch mode {
        case .automatic: return !isRelease
        case .always: return true
        case .never: return false
        }
    }
}
