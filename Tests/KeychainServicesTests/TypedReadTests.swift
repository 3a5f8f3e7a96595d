// The typed reads (KeychainCopyGenericPasswords) answer exactly as SecItemCopyMatching does
// for the equivalent dictionary: the same items, data and attributes, the same status and
// the same diagnosis, across access groups, synchronizable filters, labels, a locked
// keychain, access control and a rolled-back database.
import Foundation
import KeychainAuthentication
import Testing
@_spi(Keysmith) @testable import KeychainServices

struct TypedReadTests {
    init() { PassphraseKey.fastForTesting.store(true, ordering: .relaxed) }

    /// What one call answered: status, diagnosis, and the items as (account, label,
    /// comment, group, data).
    private struct Answer: Equatable, CustomStringConvertible {
        struct Item: Equatable {
            var account, label, comment, group: String?
            var data: Data?
        }
        var status: OSStatus
        var diagnosis: String?
        var recovery: String?
        var items: [Item]
        var description: String {
            "\(status) \(diagnosis ?? "-") \(items.map { "\($0.account ?? "?")/\($0.label ?? "?")/\($0.group ?? "?")/\($0.data.map { String(decoding: $0, as: UTF8.self) } ?? "nil")" })"
        }
    }

    private func viaDictionary(_ search: GenericPasswordSearch) -> Answer {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(search.equivalentQuery as CFDictionary, &result)
        let dictionaries: [[String: Any]]
        if let many = result as? [[String: Any]] {
            dictionaries = many
        } else if let one = result as? [String: Any] {
            dictionaries = [one]
        } else {
            dictionaries = []
        }
        return Answer(
            status: status, diagnosis: KeychainDiagnostics.lastFailureDescription,
            recovery: KeychainDiagnostics.lastFailureRecovery,
            items: dictionaries.map {
                Answer.Item(
                    account: $0[kSecAttrAccount as String] as? String, label: $0[kSecAttrLabel as String] as? String,
                    comment: $0[kSecAttrComment as String] as? String, group: $0[kSecAttrAccessGroup as String] as? String,
                    data: $0[kSecValueData as String] as? Data)
            })
    }

    private func typed(_ search: GenericPasswordSearch) -> Answer {
        var items: [GenericPasswordItem] = []
        let status = KeychainCopyGenericPasswords(search, &items)
        return Answer(
            status: status, diagnosis: KeychainDiagnostics.lastFailureDescription,
            recovery: KeychainDiagnostics.lastFailureRecovery,
            items: items.map {
                Answer.Item(account: $0.account, label: $0.label, comment: $0.comment, group: $0.accessGroup, data: $0.data)
            })
    }

    /// Both ways give the same answer; returns it.
    @discardableResult
    private func expectSameAnswer(_ search: GenericPasswordSearch, _ comment: Comment? = nil) -> Answer {
        let expected = viaDictionary(search)
        let got = typed(search)
        #expect(got == expected, "\(search.equivalentQuery) \(comment.map { "\($0)" } ?? "")")
        return got
    }

    /// Several searches in one call answer as the dictionary calls made one after the
    /// other: the same items per search, or the first failure, its search and diagnosis.
    private func expectSameAnswers(_ searches: [GenericPasswordSearch], _ comment: Comment? = nil) {
        var expected: [Answer] = []
        var expectedFailure: (index: Int, answer: Answer)?
        for (index, search) in searches.enumerated() {
            let answer = viaDictionary(search)
            if answer.status != errSecSuccess && answer.status != errSecItemNotFound {
                expectedFailure = (index, answer)
                break
            }
            expected.append(answer)
        }
        var results: [[GenericPasswordItem]] = []
        var failedSearch: Int?
        let status = KeychainCopyGenericPasswords(searches, &results, failedSearch: &failedSearch)
        let diagnosis = KeychainDiagnostics.lastFailureDescription
        let recovery = KeychainDiagnostics.lastFailureRecovery
        let label = "\(searches.map(\.equivalentQuery)) \(comment.map { "\($0)" } ?? "")"
        if let expectedFailure {
            #expect(status == expectedFailure.answer.status, "\(label)")
            #expect(failedSearch == expectedFailure.index, "\(label)")
            #expect(diagnosis == expectedFailure.answer.diagnosis, "\(label)")
            #expect(recovery == expectedFailure.answer.recovery, "\(label)")
            #expect(results.isEmpty, "\(label)")
        } else {
            #expect(status == errSecSuccess, "\(label)")
            #expect(failedSearch == nil, "\(label)")
            #expect(diagnosis == nil, "\(label)")
            let got = results.map { items in
                items.map {
                    Answer.Item(account: $0.account, label: $0.label, comment: $0.comment, group: $0.accessGroup, data: $0.data)
                }
            }
            #expect(got == expected.map(\.items), "\(label)")
        }
    }

    private func add(_ attributes: [String: Any]) {
        #expect(SecItemAdd(attributes as CFDictionary, nil) == errSecSuccess, "\(attributes)")
    }

    private func fill() {
        add(genp("svc", "a").with([kSecValueData as String: Data("data-a".utf8), kSecAttrLabel as String: "name",
                                   kSecAttrComment as String: "1"]))
        add(genp("svc", "b").with([kSecValueData as String: Data("data-b".utf8), kSecAttrLabel as String: "name"]))
        add(genp("svc", "c").with([kSecValueData as String: Data("data-c".utf8), kSecAttrAccessGroup as String: "com.example.shared",
                                   kSecAttrLabel as String: "name"]))
        add(genp("svc", "d").with([kSecValueData as String: Data("data-d".utf8), kSecAttrSynchronizable as String: true,
                                   kSecAttrLabel as String: "name"]))
        add(genp("svc", "e"))  // no data, no label
        add(genp("svc", "f").with([kSecValueData as String: Data("data-f".utf8), kSecAttrLabel as String: Data("name".utf8)]))
        add([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "svc",
             kSecAttrAccount as String: Data("binary".utf8), kSecValueData as String: Data("data-binary".utf8)])
        add(genp("other", "a").with([kSecValueData as String: Data("other-a".utf8), kSecAttrLabel as String: "name"]))
    }

    private var searches: [GenericPasswordSearch] {
        var all: [GenericPasswordSearch] = []
        for service in ["svc", "other", "none"] {
            for (account, label) in [(nil, nil), ("a", nil), ("c", nil), ("e", nil), ("binary", nil), (nil, "name"),
                                     ("a", "name"), ("b", "other"), (nil, "missing")] as [(String?, String?)] {
                for group in [nil, "com.example.app", "com.example.shared", "com.example.unentitled"] {
                    for synchronizable in [nil, true, false] {
                        for matchesAll in [false, true] {
                            for returnsData in [false, true] {
                                all.append(GenericPasswordSearch(
                                    service: service, account: account, label: label, accessGroup: group,
                                    synchronizable: synchronizable, matchesAll: matchesAll, returnsData: returnsData))
                            }
                        }
                    }
                }
            }
        }
        return all
    }

    @Test func typedSearchesAnswerAsSecItemCopyMatching() {
        TemporaryKeychain.with { _ in
            // Before the keychain exists: not found, naming the directory.
            expectSameAnswer(GenericPasswordSearch(service: "svc", matchesAll: true, returnsData: true))
            fill()
            var found = 0
            for search in searches where !expectSameAnswer(search).items.isEmpty { found += 1 }
            #expect(found > 100)
            let everything = expectSameAnswer(GenericPasswordSearch(service: "svc", synchronizable: true, matchesAll: true, returnsData: true))
            #expect(everything.items.map(\.account) == ["d"])
            let shared = expectSameAnswer(GenericPasswordSearch(
                service: "svc", label: "name", accessGroup: "com.example.shared", matchesAll: true, returnsData: true))
            #expect(shared.items.map(\.data) == [Data("data-c".utf8)])
            let refused = expectSameAnswer(GenericPasswordSearch(
                service: "svc", accessGroup: "com.example.unentitled", matchesAll: false, returnsData: true))
            #expect(refused.status == errSecMissingEntitlement)
        }
    }

    @Test func searchesInOneCallAnswerAsSeparateCalls() {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        let pairs: [[GenericPasswordSearch]] = {
            let some = searches.enumerated().filter { $0.offset % 7 == 0 }.map(\.element)
            var pairs: [[GenericPasswordSearch]] = []
            for (index, first) in some.enumerated() { pairs.append([first, some[(index * 5 + 3) % some.count]]) }
            return pairs
        }()
        keychain.run {
            // No keychain yet: nothing found, or the group a search is not entitled to.
            for pair in pairs.prefix(40) { expectSameAnswers(pair, "no keychain") }
            fill()
            for pair in pairs { expectSameAnswers(pair) }
            expectSameAnswers([], "no search")
            let byLabel = GenericPasswordSearch(service: "svc", label: "name", matchesAll: true, returnsData: true)
            let byAccount = GenericPasswordSearch(service: "svc", account: "name", matchesAll: true, returnsData: true)
            let refused = GenericPasswordSearch(
                service: "svc", accessGroup: "com.example.unentitled", matchesAll: true, returnsData: true)
            expectSameAnswers([byLabel, byAccount])
            expectSameAnswers([byLabel, refused, byAccount])
            expectSameAnswers([refused, byLabel])
        }
        keychain.withGroups([]).run { expectSameAnswers(pairs[0], "no groups") }
    }

    /// A key's two layouts (every item labelled `name`, every item whose account is
    /// `name`, of one service) are read as one search, and answer as the two separate
    /// calls do: an item that matches both is in both answers, the label matches stored
    /// as data too, other groups, services and synchronizable items stay out, and every
    /// write is seen by the next call, whether the pair was read from SQLite or from the
    /// search cache.
    @Test func aKeysTwoLayoutsReadAsOneSearchAnswerAsSeparateCalls() throws {
        try TemporaryKeychain.with { keychain in
            func item(_ account: String, label: Any? = nil, group: String? = nil, sync: Bool = false, _ data: String) {
                var attributes = genp("keys", account).with([kSecValueData as String: Data(data.utf8)])
                if let label { attributes[kSecAttrLabel as String] = label }
                if let group { attributes[kSecAttrAccessGroup as String] = group }
                if sync { attributes[kSecAttrSynchronizable as String] = true }
                add(attributes)
            }
            item("k@1", label: "k", "k one")
            item("k@2", label: "k", "k two")
            item("k", "k in the older layout")
            item("k", group: "com.example.shared", "k shared")
            item("k@3", label: "k", sync: true, "k synchronizable")
            item("k@data", label: Data("k".utf8), "k labelled by data")
            item("both", label: "both", "both ways")
            item("both@1", label: "both", "both, versioned")
            item("x", label: "k", "labelled k, named x")
            add(genp("other", "k").with([kSecValueData as String: Data("other k".utf8), kSecAttrLabel as String: "k"]))
            let engine = try KeychainEngine.engine(for: keychain.directory)

            func pairs() -> [[GenericPasswordSearch]] {
                var pairs: [[GenericPasswordSearch]] = []
                for name in ["k", "both", "x", "missing"] {
                    for group in [nil, "com.example.app", "com.example.shared", "com.example.unentitled"] {
                        for synchronizable in [nil, true, false] {
                            for (labelData, accountData) in [(true, true), (false, true), (true, false)] {
                                pairs.append([
                                    GenericPasswordSearch(
                                        service: "keys", label: name, accessGroup: group, synchronizable: synchronizable,
                                        matchesAll: true, returnsData: labelData),
                                    GenericPasswordSearch(
                                        service: "keys", account: name, accessGroup: group,
                                        synchronizable: synchronizable, matchesAll: true, returnsData: accountData),
                                ])
                            }
                        }
                    }
                }
                return pairs
            }
            func expectAllSame(_ comment: String) {
                // Three rounds: read from SQLite, read and cached, answered from the cache.
                for round in 0..<3 {
                    for pair in pairs() { expectSameAnswers(pair, "\(comment), round \(round)") }
                }
            }
            let before = engine.searchesReadTogether.load(ordering: .relaxed)
            expectAllSame("as filled")
            // Every pair but the unentitled group's was read as one search, each round.
            #expect(engine.searchesReadTogether.load(ordering: .relaxed) - before == 3 * 4 * 3 * 3 * 3)

            // Searches in the other order, or not every item, are read one by one.
            let unchanged = engine.searchesReadTogether.load(ordering: .relaxed)
            let byLabel = GenericPasswordSearch(service: "keys", label: "k", matchesAll: true, returnsData: true)
            let byAccount = GenericPasswordSearch(service: "keys", account: "k", matchesAll: true, returnsData: true)
            var firstOnly = byLabel
            firstOnly.matchesAll = false
            var elsewhere = byAccount
            elsewhere.service = "other"
            var sharedOnly = byAccount
            sharedOnly.accessGroup = "com.example.shared"
            var synchronizableOnly = byAccount
            synchronizableOnly.synchronizable = true
            var anySynchronizable = byLabel
            anySynchronizable.synchronizable = true
            for pair in [
                [byAccount, byLabel], [firstOnly, byAccount], [byLabel, elsewhere], [byLabel, sharedOnly],
                [byLabel, synchronizableOnly], [anySynchronizable, byAccount],
            ] {
                expectSameAnswers(pair)
            }
            // The engine checks what its one SQL search takes from the first search (class,
            // service, access group, synchronizable filter) itself: a pair it is asked to
            // read together that differs in one of them is read search by search.
            var internetPassword = byAccount.itemQuery
            internetPassword.itemClass = .internetPassword
            let groups = AccessGroups(KeychainEnvironment.current.accessGroups)
            for queries in [
                [byLabel, sharedOnly], [byLabel, synchronizableOnly], [anySynchronizable, byAccount], [byLabel, elsewhere],
            ].map({ $0.map(\.itemQuery) }) + [[byLabel.itemQuery, internetPassword]] {
                let together = try engine.matchingRecords(of: queries, groups: groups, readTogether: true)
                let apart = try engine.matchingRecords(of: queries, groups: groups, readTogether: false)
                #expect(together.map { $0.map(\.rowID) } == apart.map { $0.map(\.rowID) })
            }
            #expect(engine.searchesReadTogether.load(ordering: .relaxed) == unchanged)

            let versionTwo = genp("keys", "k@2") as CFDictionary
            #expect(SecItemUpdate(versionTwo, [kSecAttrLabel as String: "z"] as CFDictionary) == errSecSuccess)
            expectAllSame("after a label changed")
            #expect(SecItemDelete(genp("keys", "k") as CFDictionary) == errSecSuccess)
            expectAllSame("after the older layout's items were deleted")
            item("k", "k in the older layout again")
            #expect(SecItemUpdate(genp("keys", "x") as CFDictionary, [kSecAttrAccount as String: "k@x"] as CFDictionary) == errSecSuccess)
            expectAllSame("after an add and an account changed")

            // Rows written before labels were indexed (no label hash) are found by label too.
            KeychainEngine.close(directory: keychain.directory)
            RawKeychainFile(keychain).execute("UPDATE items SET h3 = NULL WHERE id % 2 = 1")
            #expect(FileManager.default.createFile(
                atPath: keychain.directory.appendingPathComponent("keychain.anchor.reset").path, contents: Data()))
            expectAllSame("with rows written before labels were indexed")
        }
    }

    /// When one of a key's two layouts is locked, the pair read as one search fails as
    /// the separate calls do: the same status, diagnosis and failing search.
    @Test func aKeysTwoLayoutsFailAsSeparateCallsWhenOneIsLocked() throws {
        try TemporaryKeychain.with { _ in
            func item(_ account: String, label: String?, _ accessible: CFString) {
                var attributes = genp("keys", account).with([
                    kSecValueData as String: Data(account.utf8), kSecAttrAccessible as String: accessible,
                ])
                if let label { attributes[kSecAttrLabel as String] = label }
                add(attributes)
            }
            item("k@1", label: "k", kSecAttrAccessibleAlways)
            item("k", label: nil, kSecAttrAccessibleWhenUnlocked)
            item("j@1", label: "j", kSecAttrAccessibleWhenUnlocked)
            item("j", label: nil, kSecAttrAccessibleAlways)
            item("i@1", label: "i", kSecAttrAccessibleAlways)
            func pair(_ name: String) -> [GenericPasswordSearch] {
                [
                    GenericPasswordSearch(service: "keys", label: name, matchesAll: true, returnsData: true),
                    GenericPasswordSearch(service: "keys", account: name, matchesAll: true, returnsData: true),
                ]
            }
            try KeychainEnvironment.setPassphrase("correct horse", old: nil)
            for name in ["k", "j", "i"] { expectSameAnswers(pair(name), "unlocked, \(name)") }
            try KeychainEnvironment.lock(evictingFirstUnlock: true)
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            for round in 0..<2 {
                for name in ["k", "j", "i"] { expectSameAnswers(pair(name), "locked, \(name), round \(round)") }
            }
            try KeychainEnvironment.unlock(passphrase: "correct horse")
            for name in ["k", "j", "i"] { expectSameAnswers(pair(name), "unlocked again, \(name)") }
        }
    }

    @Test func searchesInOneCallFailAsSeparateCallsWhenLockedOrRolledBack() throws {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        let always = GenericPasswordSearch(service: "svc", account: "b", matchesAll: true, returnsData: true)
        let unlocked = GenericPasswordSearch(service: "svc", account: "a", matchesAll: true, returnsData: true)
        try keychain.run {
            add(genp("svc", "a").with([kSecValueData as String: Data("data-a".utf8),
                                       kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked]))
            add(genp("svc", "b").with([kSecValueData as String: Data("data-b".utf8),
                                       kSecAttrAccessible as String: kSecAttrAccessibleAlways]))
            try KeychainEnvironment.setPassphrase("correct horse", old: nil)
            try KeychainEnvironment.lock(evictingFirstUnlock: true)
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            expectSameAnswers([always, unlocked], "second locked")
            expectSameAnswers([unlocked, always], "first locked")
            try KeychainEnvironment.unlock(passphrase: "correct horse")
            expectSameAnswers([always, unlocked], "unlocked")
        }
        KeychainEngine.close(directory: keychain.directory)
        let file = RawKeychainFile(keychain)
        file.execute("DELETE FROM items WHERE id = \(file.rowIDs()[0])")
        keychain.run { expectSameAnswers([always, unlocked], "rolled back") }
    }

    @Test func searchesInOneCallEvaluateAccessControlAsSeparateCalls() {
        let finger = ScriptedAuthenticator(outcomes: [.success, .success, .success, .success, .cancel, .cancel, .success, .success])
        TemporaryKeychain.with { _ in
            KeychainAuthenticators.withAuthenticators(KeychainAuthenticators([finger])) {
                let control = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .biometryAny, nil)!
                add(genp("svc", "guarded").with([kSecValueData as String: Data("pin".utf8), kSecAttrAccessControl as String: control,
                                                 kSecAttrLabel as String: "guarded"]))
                let byLabel = GenericPasswordSearch(service: "svc", label: "guarded", matchesAll: true, returnsData: true)
                let byAccount = GenericPasswordSearch(service: "svc", account: "guarded", matchesAll: true, returnsData: true)
                expectSameAnswers([byLabel, byAccount], "granted")  // two evaluations each way
                #expect(finger.promptCount == 4)
                expectSameAnswers([byLabel, byAccount], "canceled")  // the first search fails, each way
                #expect(finger.promptCount == 6)
                // A failing second search comes after the first one's evaluation, each way.
                let refused = GenericPasswordSearch(
                    service: "svc", accessGroup: "com.example.unentitled", matchesAll: true, returnsData: true)
                expectSameAnswers([byLabel, refused], "granted, then refused")
                #expect(finger.promptCount == 8)
            }
        }
    }

    @Test func aProcessSeeingOtherGroupsGetsTheSameAnswers() {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run { fill() }
        keychain.withGroups(["com.example.shared"]).run {
            for search in searches { expectSameAnswer(search) }
        }
        keychain.withGroups([]).run {
            let answer = expectSameAnswer(GenericPasswordSearch(service: "svc", matchesAll: false, returnsData: true))
            #expect(answer.status == errSecMissingEntitlement)
            #expect(answer.diagnosis != nil)
        }
    }

    @Test func aLockedKeychainRefusesBothWaysAlike() throws {
        try TemporaryKeychain.with { _ in
            add(genp("svc", "a").with([kSecValueData as String: Data("data-a".utf8),
                                       kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked]))
            add(genp("svc", "b").with([kSecValueData as String: Data("data-b".utf8),
                                       kSecAttrAccessible as String: kSecAttrAccessibleAlways]))
            try KeychainEnvironment.setPassphrase("correct horse", old: nil)
            try KeychainEnvironment.lock(evictingFirstUnlock: true)
            defer { try? KeychainEnvironment.lock(evictingFirstUnlock: true) }
            let locked = expectSameAnswer(GenericPasswordSearch(service: "svc", account: "a", matchesAll: false, returnsData: true))
            #expect(locked.status == errSecInteractionNotAllowed)
            #expect(locked.recovery != nil)
            expectSameAnswer(GenericPasswordSearch(service: "svc", account: "b", matchesAll: false, returnsData: true))
            expectSameAnswer(GenericPasswordSearch(service: "svc", matchesAll: true, returnsData: true))
            try KeychainEnvironment.unlock(passphrase: "correct horse")
            let open = expectSameAnswer(GenericPasswordSearch(service: "svc", account: "a", matchesAll: false, returnsData: true))
            #expect(open.items.map(\.data) == [Data("data-a".utf8)])
        }
    }

    @Test func accessControlIsEvaluatedBothWaysAlike() {
        let finger = ScriptedAuthenticator(outcomes: [.success, .success, .cancel, .cancel, .failure, .failure])
        let list = KeychainAuthenticators([finger])
        TemporaryKeychain.with { _ in
            KeychainAuthenticators.withAuthenticators(list) {
                let control = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .biometryAny, nil)!
                add(genp("svc", "guarded").with([kSecValueData as String: Data("pin".utf8), kSecAttrAccessControl as String: control]))
                let search = GenericPasswordSearch(
                    service: "svc", account: "guarded", matchesAll: false, returnsData: true, operationPrompt: "Pay 12 EUR")
                let granted = expectSameAnswer(search, "granted")
                #expect(granted.items.map(\.data) == [Data("pin".utf8)])
                #expect(expectSameAnswer(search, "canceled").status == errSecUserCanceled)
                #expect(expectSameAnswer(search, "failed").status == errSecAuthFailed)
                #expect(finger.requests.map(\.reason) == Array(repeating: "Pay 12 EUR", count: 6))
                // Without the data there is nothing to evaluate.
                var attributesOnly = search
                attributesOnly.returnsData = false
                #expect(expectSameAnswer(attributesOnly, "attributes").status == errSecSuccess)
                #expect(finger.promptCount == 6)
            }
        }
    }

    @Test func aRolledBackDatabaseIsRefusedBothWaysAlike() {
        let keychain = TemporaryKeychain()
        defer { keychain.remove() }
        keychain.run {
            add(genp("svc", "a").with([kSecValueData as String: Data("data-a".utf8)]))
            add(genp("svc", "b").with([kSecValueData as String: Data("data-b".utf8)]))
        }
        KeychainEngine.close(directory: keychain.directory)
        let file = RawKeychainFile(keychain)
        file.execute("DELETE FROM items WHERE id = \(file.rowIDs()[0])")
        keychain.run {
            let answer = expectSameAnswer(GenericPasswordSearch(service: "svc", account: "b", matchesAll: false, returnsData: true))
            #expect(answer.status == errSecDecode)
            #expect(answer.diagnosis?.contains("rolled back") == true)
        }
    }
}
