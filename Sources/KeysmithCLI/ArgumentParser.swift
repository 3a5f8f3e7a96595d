// The hand-written argument parser of `keysmith`: a pure function from the words of a
// command line to the options and positional arguments they name. No I/O, no globals,
// so every rule is covered by the table-driven tests in ArgumentParserTests.

/// One option a command accepts, for example `-s SERVICE` or `--json`.
///
/// An option has a canonical ``name`` (used to read it back from ``ParsedArguments``) and
/// one or two spellings: a one-letter short form (`-s`) and/or a long form (`--service`).
public struct OptionSpec: Sendable, Hashable {
    /// Whether an option takes a value.
    public enum ValueRule: Sendable, Hashable {
        /// A flag with no value: `-U`, `--json`.
        case none
        /// A value is required: `-s SERVICE`, `-sSERVICE`, `--keychain=PATH`. The string is
        /// the placeholder shown in help.
        case required(String)
        /// A value may follow (macOS `security`'s `-w`): the next argument is the value,
        /// unless the option is the last argument, or the next argument is `--` or one of
        /// this command's own options written alone (`-U`, `--stdin`); then the option is
        /// present without a value (for `-w`: "prompt for it"). The string is the
        /// placeholder shown in help.
        case optional(String)
    }

    /// The canonical name the option is read back by, for example `"service"`.
    public let name: String
    /// The one-letter short form without the dash (`"s"` for `-s`), if any.
    public let shortName: Character?
    /// The long form without the dashes (`"service"` for `--service`), if any.
    public let longName: String?
    /// Whether and how the option takes a value.
    public let valueRule: ValueRule
    /// Whether the option may be given more than once (all values are kept).
    public let isRepeatable: Bool
    /// One or two sentences for `keysmith help COMMAND`.
    public let help: String

    /// Creates an option.
    /// - Parameters:
    ///   - name: The canonical name; defaults to the long name, else the short letter.
    ///   - short: The one-letter short form, without the dash.
    ///   - long: The long form, without the dashes.
    ///   - value: Whether and how the option takes a value.
    ///   - repeatable: Whether the option may be given more than once.
    ///   - help: The help text.
    public init(
        name: String? = nil, short: Character? = nil, long: String? = nil, value: ValueRule = .none,
        repeatable: Bool = false, help: String
    ) {
        self.name = name ?? long ?? short.map { String($0) } ?? "?"
        shortName = short
        longName = long
        valueRule = value
        isRepeatable = repeatable
        self.help = help
    }

    /// The spellings for help, for example `-s, --service SERVICE` or `-w [PASSWORD]`.
    public var helpSpelling: String {
        var forms: [String] = []
        if let shortName { forms.append("-\(shortName)") }
        if let longName { forms.append("--\(longName)") }
        var text = forms.joined(separator: ", ")
        switch valueRule {
        case .none: break
        case .required(let placeholder): text += " \(placeholder)"
        case .optional(let placeholder): text += " [\(placeholder)]"
        }
        return text
    }

    /// The preferred spelling for messages: `-s` when there is a short form, else `--json`.
    public var displayName: String {
        if let shortName { return "-\(shortName)" }
        return "--\(longName ?? name)"
    }
}

/// One occurrence of an option on the command line, in order.
public struct OptionOccurrence: Sendable, Hashable, CustomStringConvertible {
    /// The canonical name of the option (``OptionSpec/name``).
    public let name: String
    /// The value given with it, or `nil` for a flag or an optional value left out.
    public let value: String?

    /// Creates an occurrence.
    /// - Parameters:
    ///   - name: The canonical option name.
    ///   - value: The value given, if any.
    public init(_ name: String, _ value: String? = nil) {
        self.name = name
        self.value = value
    }

    /// `name` or `name=value`, for test failure messages. Tests only parse made-up values.
    public var description: String { value.map { "\(name)=\($0)" } ?? name }
}

/// What a command line says: the options in the order given and the positional arguments.
public struct ParsedArguments: Sendable, Hashable {
    /// Every option occurrence, in command-line order.
    public var occurrences: [OptionOccurrence]
    /// The arguments that are not options (including `-`, and everything after `--`).
    public var positionals: [String]

    /// Creates a parse result.
    /// - Parameters:
    ///   - occurrences: The option occurrences, in order.
    ///   - positionals: The positional arguments, in order.
    public init(occurrences: [OptionOccurrence] = [], positionals: [String] = []) {
        self.occurrences = occurrences
        self.positionals = positionals
    }

    /// Whether the option was given at least once (with or without a value).
    /// - Parameter name: The canonical option name.
    /// - Returns: `true` when it occurs.
    public func contains(_ name: String) -> Bool {
        occurrences.contains { $0.name == name }
    }

    /// The last occurrence of an option, if any (the last one wins, as with `getopt`).
    /// - Parameter name: The canonical option name.
    /// - Returns: The occurrence, or `nil` when the option was not given.
    public func lastOccurrence(of name: String) -> OptionOccurrence? {
        occurrences.last { $0.name == name }
    }

    /// The value of the last occurrence of an option, if it has one.
    /// - Parameter name: The canonical option name.
    /// - Returns: The value, or `nil` when the option was not given or given without a value.
    public func value(_ name: String) -> String? {
        lastOccurrence(of: name)?.value
    }

    /// Every value given for a repeatable option, in order.
    /// - Parameter name: The canonical option name.
    /// - Returns: The values (occurrences without a value are skipped).
    public func values(_ name: String) -> [String] {
        occurrences.filter { $0.name == name }.compactMap(\.value)
    }

    /// Adds the occurrences and positionals of `other` after this one's.
    /// - Parameter other: The arguments to append.
    /// - Returns: The combined arguments.
    public func appending(_ other: ParsedArguments) -> ParsedArguments {
        ParsedArguments(occurrences: occurrences + other.occurrences, positionals: positionals + other.positionals)
    }
}

/// Why a command line could not be parsed. The description is one sentence for people.
public enum ArgumentError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An option this command does not know, as written (`-x`, `--colour`).
    case unknownOption(String)
    /// An option that needs a value came last, or was followed by another option.
    case missingValue(String)
    /// A flag was written with a value (`--json=yes`).
    case unexpectedValue(String)
    /// A non-repeatable option was given twice with different values.
    case repeatedOption(String)

    /// One sentence saying what is wrong (never a value: values may be secrets).
    public var description: String {
        switch self {
        case .unknownOption(let option): return "unknown option '\(option)'"
        case .missingValue(let option): return "option '\(option)' needs a value"
        case .unexpectedValue(let option): return "option '\(option)' takes no value"
        case .repeatedOption(let option): return "option '\(option)' was given twice with different values"
        }
    }
}

/// Parses command lines against a table of ``OptionSpec``s.
///
/// The rules, in the spirit of `getopt` and macOS `security`:
/// - `--` ends the options: everything after it is positional.
/// - `-` alone is a positional argument (by convention: standard input).
/// - Long options take their value as `--name=value` or `--name value`.
/// - Short options take their value as `-sVALUE` or `-s VALUE`; flags cluster (`-Ug`),
///   and the last letter of a cluster may take a value (`-Uw VALUE`).
/// - A required value may not be one of the command's own options written alone
///   (`-s -a x` is a missing value, not the service `-a`); write `-s=-a`-style values as
///   `--service=-a` or `-s-a`.
/// - An optional value (`-w`) is taken from the next argument unless the option is last,
///   or is followed by `--` or by one of the command's options written alone.
///
/// ```swift
/// let parser = ArgumentParser(options: [
///     OptionSpec(short: "s", value: .required("SERVICE"), help: "…"),
///     OptionSpec(short: "w", value: .optional("PASSWORD"), help: "…"),
///     OptionSpec(short: "U", help: "…"),
/// ])
/// try parser.parse(["-s", "api", "-w", "-U"])
/// // occurrences: [s=api, w, U], positionals: []
/// ```
public struct ArgumentParser: Sendable {
    /// The options this parser accepts.
    public let options: [OptionSpec]

    /// Creates a parser for a set of options. When two options share a spelling, the
    /// first one wins.
    /// - Parameter options: The accepted options.
    public init(options: [OptionSpec]) {
        self.options = options
    }

    // A command has a few dozen options at most: a search in order finds the first one with
    // the spelling, without the dictionaries (and their generic set-up at start-up) an index
    // would need.
    private func option(long name: String) -> OptionSpec? {
        options.first { $0.longName == name }
    }

    private func option(short letter: Character) -> OptionSpec? {
        options.first { $0.shortName == letter }
    }

    /// Parses `arguments` (without the program name).
    ///
    /// - Parameters:
    ///   - arguments: The words of the command line.
    ///   - stopAtFirstPositional: When `true`, the first positional argument and everything
    ///     after it are returned unparsed in ``ParsedArguments/positionals`` (used to read
    ///     the global options before the command name).
    /// - Returns: The options and positional arguments.
    /// - Throws: ``ArgumentError`` for an unknown option, a missing or unexpected value, or
    ///   a non-repeatable option given twice with different values.
    public func parse(_ arguments: [String], stopAtFirstPositional: Bool = false) throws(ArgumentError)
        -> ParsedArguments
    {
        var result = ParsedArguments()
        var index = 0
        var optionsEnded = false

        func record(_ option: OptionSpec, _ value: String?) throws(ArgumentError) {
            // Values compare byte for byte: "jos\u{E9}" and "jose\u{301}" are two service names.
            if !option.isRepeatable, let earlier = result.lastOccurrence(of: option.name),
                earlier.value.map({ Array($0.utf8) }) != value.map({ Array($0.utf8) })
            {
                throw .repeatedOption(option.displayName)
            }
            result.occurrences.append(OptionOccurrence(option.name, value))
        }

        /// The argument after `index` as a value, if one is there and may be taken.
        func takeNext(for option: OptionSpec, optional: Bool, spelled: String) throws(ArgumentError) -> String? {
            let next = index + 1
            guard next < arguments.count else {
                if optional { return nil }
                throw .missingValue(spelled)
            }
            let candidate = arguments[next]
            if candidate == "--" || isOwnOption(candidate) {
                if optional { return nil }
                throw .missingValue(spelled)
            }
            index = next
            return candidate
        }

        while index < arguments.count {
            let argument = arguments[index]
            defer { index += 1 }
            if optionsEnded {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "-" || !argument.hasPrefix("-") {
                if stopAtFirstPositional {
                    result.positionals.append(contentsOf: arguments[index...])
                    index = arguments.count
                    break
                }
                result.positionals.append(argument)
                continue
            }
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                let name: String
                let inlineValue: String?
                if let equals = body.firstIndex(of: "=") {
                    name = String(body[..<equals])
                    inlineValue = String(body[body.index(after: equals)...])
                } else {
                    name = String(body)
                    inlineValue = nil
                }
                guard let option = option(long: name) else { throw .unknownOption("--\(name)") }
                let spelled = "--\(name)"
                switch option.valueRule {
                case .none:
                    if inlineValue != nil { throw .unexpectedValue(spelled) }
                    try record(option, nil)
                case .required:
                    let value = try inlineValue != nil
                        ? inlineValue : takeNext(for: option, optional: false, spelled: spelled)
                    try record(option, value)
                case .optional:
                    let value = try inlineValue != nil
                        ? inlineValue : takeNext(for: option, optional: true, spelled: spelled)
                    try record(option, value)
                }
                continue
            }
            // A cluster of short options: -U, -sSERVICE, -Ug, -Uw VALUE.
            var letters = Substring(argument.dropFirst())
            while let letter = letters.first {
                letters = letters.dropFirst()
                guard let option = option(short: letter) else { throw .unknownOption("-\(letter)") }
                let spelled = "-\(letter)"
                switch option.valueRule {
                case .none:
                    try record(option, nil)
                    continue
                case .required:
                    let value = try letters.isEmpty
                        ? takeNext(for: option, optional: false, spelled: spelled) : String(letters)
                    try record(option, value)
                case .optional:
                    let value = try letters.isEmpty
                        ? takeNext(for: option, optional: true, spelled: spelled) : String(letters)
                    try record(option, value)
                }
                break
            }
        }
        return result
    }

    /// Whether `argument` is exactly one of this parser's options written alone: `-U`,
    /// `--stdin` or `--label=…`. Clusters such as `-Ug` do not count, so a password that
    /// happens to start with a dash can follow `-w`.
    public func isOwnOption(_ argument: String) -> Bool {
        if argument.hasPrefix("--") {
            let name = argument.dropFirst(2).split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                .first.map(String.init) ?? ""
            return option(long: name) != nil
        }
        if argument.hasPrefix("-"), argument.count == 2, let letter = argument.last {
            return option(short: letter) != nil
        }
        return false
    }
}
