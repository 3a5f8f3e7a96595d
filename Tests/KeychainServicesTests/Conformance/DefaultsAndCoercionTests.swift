import Foundation
import KeychainServices
import Testing

extension Conformance {
/// Reference §2.3 (defaults applied on add) and §2.4 (value coercion and matching).
struct DefaultsAndCoercionTests {
    private func isRecent(_ date: Date?, within seconds: TimeInterval = 120) -> Bool {
        guard let date else { return false }
        return abs(date.timeIntervalSinceNow) < seconds
    }

    // §2.3 + §3.6: defaults for a genp item appear in its attribute dictionary.
    @Test func genericPasswordDefaults() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(item(kSecClassGenericPassword)) == errSecSuccess)
            let attributes = try #require(attrsOf(item(kSecClassGenericPassword)))
            #expect(asString(attributes["acct"]) == "")
            #expect(asString(attributes["svce"]) == "")
            #expect(asString(attributes["pdmn"]) == "ak")
            #expect(asString(attributes["agrp"]) == "com.example.app")
            #expect(asNumber(attributes["sync"]) == 0)
            #expect(asNumber(attributes["tomb"]) == 0)
            #expect(asData(attributes["musr"]) == Data())
            #expect(isRecent(asDate(attributes["cdat"])))
            #expect(isRecent(asDate(attributes["mdat"])))
        }
    }

    // §2.3: inet PK defaults: "" for blobs, 0 for numbers.
    @Test func internetPasswordDefaults() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(item(kSecClassInternetPassword)) == errSecSuccess)
            let attributes = try #require(attrsOf(item(kSecClassInternetPassword)))
            for blob in ["acct", "sdmn", "srvr", "atyp", "path"] {
                #expect(asString(attributes[blob]) == "", "\(blob)")
            }
            #expect(asNumber(attributes["ptcl"]) == 0)
            #expect(asNumber(attributes["port"]) == 0)
            #expect(asString(attributes["pdmn"]) == "ak")
            #expect(asString(attributes["agrp"]) == "com.example.app")
            #expect(asNumber(attributes["sync"]) == 0)
            #expect(isRecent(asDate(attributes["cdat"])))
        }
    }

    // §2.3: certificates default to pdmn "dk"; issr/slnr empty data; ctyp 0.
    @Test func certificateDefaults() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(item(kSecClassCertificate)) == errSecSuccess)
            let attributes = try #require(attrsOf(item(kSecClassCertificate)))
            #expect(asString(attributes["pdmn"]) == "dk")
            #expect(asNumber(attributes["ctyp"]) == 0)
            #expect(asData(attributes["issr"]) == Data())
            #expect(asData(attributes["slnr"]) == Data())
            #expect(asString(attributes["agrp"]) == "com.example.app")
            #expect(asNumber(attributes["sync"]) == 0)
        }
    }

    // §2.3: keys defaults: numbers 0, atag "", klbl empty data, sdat/edat = date 0, pdmn "ak".
    @Test func keyDefaults() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(item(kSecClassKey)) == errSecSuccess)
            let attributes = try #require(attrsOf(item(kSecClassKey)))
            for number in ["kcls", "crtr", "type", "bsiz", "esiz"] {
                #expect(asNumber(attributes[number]) == 0, "\(number)")
            }
            #expect(asString(attributes["atag"]) == "")
            #expect(asData(attributes["klbl"]) == Data())
            #expect(asDate(attributes["sdat"]) == Date(timeIntervalSinceReferenceDate: 0))
            #expect(asDate(attributes["edat"]) == Date(timeIntervalSinceReferenceDate: 0))
            #expect(asString(attributes["pdmn"]) == "ak")
        }
    }

    // §2.3: agrp com.apple.apsd defaults pdmn to dku.
    @Test func apsdGroupDefaultsToAlwaysThisDeviceOnly() throws {
        try TemporaryKeychain.with(accessGroups: ["com.apple.apsd"]) { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            let attributes = try #require(attrsOf(genp()))
            #expect(asString(attributes["agrp"]) == "com.apple.apsd")
            #expect(asString(attributes["pdmn"]) == "dku")
        }
    }

    // §2.3: the default agrp is the first entry of the caller's list, whatever it is.
    @Test func defaultAccessGroupIsFirstOfTheList() throws {
        try TemporaryKeychain.with(accessGroups: ["com.example.shared", "com.example.app"]) { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            let attributes = try #require(attrsOf(genp()))
            #expect(asString(attributes["agrp"]) == "com.example.shared")
        }
    }

    // §2.3 [C]: caller-supplied creation/modification dates are overwritten with "now" on add.
    @Test func creationAndModificationDatesAreOverwrittenOnAdd() throws {
        try TemporaryKeychain.with { _ in
            let past = Date(timeIntervalSinceReferenceDate: 1_000_000)
            #expect(secAdd(genp().with([kSecAttrCreationDate as String: past, kSecAttrModificationDate as String: past])) == errSecSuccess)
            let attributes = try #require(attrsOf(genp()))
            #expect(isRecent(asDate(attributes["cdat"])))
            #expect(isRecent(asDate(attributes["mdat"])))
        }
    }

    // §2.3: SynchronizableAny on add is dropped → sync = 0.
    @Test func synchronizableAnyOnAddMeansNotSynchronizable() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecAttrSynchronizable, kSecAttrSynchronizableAny)) == errSecSuccess)
            let attributes = try #require(attrsOf(genp()))
            #expect(asNumber(attributes["sync"]) == 0)
            #expect(secCopy(genp().with(kSecAttrSynchronizable, true)).status == errSecItemNotFound)
        }
    }

    // §2.4: numbers accept strings that round-trip ("42" → 42); others stay strings.
    @Test func numberAttributeCoercion() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp("s", "a").with(kSecAttrType, "42")) == errSecSuccess)
            let fortyTwo = try #require(attrsOf(genp("s", "a")))
            #expect(fortyTwo["type"] is NSNumber)
            #expect(asNumber(fortyTwo["type"]) == 42)
            // Matching the number with a number or the round-tripping string.
            #expect(secCopy(genp("s", "a").with(kSecAttrType, 42)).status == errSecSuccess)
            #expect(secCopy(genp("s", "a").with(kSecAttrType, "42")).status == errSecSuccess)
            #expect(secCopy(genp("s", "a").with(kSecAttrType, 43)).status == errSecItemNotFound)

            #expect(secAdd(genp("s", "b").with(kSecAttrType, "http")) == errSecSuccess)
            let http = try #require(attrsOf(genp("s", "b")))
            #expect(asString(http["type"]) == "http")

            #expect(secAdd(genp("s", "c").with(kSecAttrCreator, "")) == errSecSuccess)
            let empty = try #require(attrsOf(genp("s", "c")))
            #expect(asString(empty["crtr"]) == "")

            // " 42" and "042" do not round-trip exactly, so they stay strings.
            #expect(secAdd(genp("s", "d").with(kSecAttrType, "042")) == errSecSuccess)
            let padded = try #require(attrsOf(genp("s", "d")))
            #expect(asString(padded["type"]) == "042")

            #expect(secAdd(genp("s", "e").with(kSecAttrType, "-5")) == errSecSuccess)
            #expect(asNumber(attrsOf(genp("s", "e"))?["type"]) == -5)
            for (index, text) in [" 42", "4.2", "1e3", "+7", "42abc"].enumerated() {
                #expect(secAdd(genp("s", "f\(index)").with(kSecAttrType, text)) == errSecSuccess)
                #expect(asString(attrsOf(genp("s", "f\(index)"))?["type"]) == text, "'\(text)' must stay a string")
            }
        }
    }

    // §2.4: booleans in number attributes are stored and returned as 0/1 and match numbers.
    @Test func booleansBecomeNumbers() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp("s", "t").with([kSecAttrIsInvisible as String: true, kSecAttrIsNegative as String: false])) == errSecSuccess)
            let attributes = try #require(attrsOf(genp("s", "t")))
            #expect(asNumber(attributes["invi"]) == 1)
            #expect(asNumber(attributes["nega"]) == 0)
            #expect(secCopy(genp("s", "t").with(kSecAttrIsInvisible, 1)).status == errSecSuccess)
            #expect(secCopy(genp("s", "t").with(kSecAttrIsNegative, 0)).status == errSecSuccess)
            #expect(secCopy(genp("s", "t").with(kSecAttrIsInvisible, 0)).status == errSecItemNotFound)
            #expect(secAdd(genp("s", "u").with(kSecAttrIsInvisible, 1)) == errSecSuccess)
            #expect(secCopy(genp("s", "u").with(kSecAttrIsInvisible, true)).status == errSecSuccess)
        }
    }

    // §2.4 [T si-12]: kSecAttrKeyClass "1" comes back as the number 1; key type "73" as 73.
    @Test func keyClassAndTypeComeBackAsNumbers() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(keyItem()) == errSecSuccess)
            let attributes = try #require(attrsOf(item(kSecClassKey)))
            #expect(attributes["kcls"] is NSNumber)
            #expect(asNumber(attributes["kcls"]) == 1)
            #expect(asNumber(attributes["type"]) == 73)
            #expect(asNumber(attributes["bsiz"]) == 256)
            #expect(secCopy(item(kSecClassKey, [kSecAttrKeyClass: 1])).status == errSecSuccess)
            #expect(secCopy(item(kSecClassKey, [kSecAttrKeyClass: kSecAttrKeyClassPublic])).status == errSecItemNotFound)
        }
    }

    // §2.4 [T testServerUsingDataType]: blob attributes keep the caller's type.
    @Test func blobAttributesKeepTheCallersType() throws {
        try TemporaryKeychain.with { _ in
            let server = Data("data.example.com".utf8)
            #expect(secAdd(item(kSecClassInternetPassword, [kSecAttrServer: server, kSecAttrAccount: "a"])) == errSecSuccess)
            let inetAttributes = try #require(attrsOf(item(kSecClassInternetPassword)))
            #expect(asData(inetAttributes["srvr"]) == server)
            #expect(asString(inetAttributes["acct"]) == "a")

            #expect(secAdd(item(kSecClassGenericPassword, [
                kSecAttrAccount: Data("bin".utf8), kSecAttrService: "svc", kSecAttrLabel: 7,
                kSecAttrGeneric: Data([0, 1, 2]), kSecAttrComment: "text",
            ])) == errSecSuccess)
            let genpAttributes = try #require(attrsOf(item(kSecClassGenericPassword)))
            #expect(asData(genpAttributes["acct"]) == Data("bin".utf8))
            #expect(asString(genpAttributes["svce"]) == "svc")
            #expect(genpAttributes["labl"] is NSNumber)
            #expect(asNumber(genpAttributes["labl"]) == 7)
            #expect(asData(genpAttributes["gena"]) == Data([0, 1, 2]))
            #expect(asString(genpAttributes["icmt"]) == "text")
        }
    }

    // §2.4: S-flag attributes match on bytes: Data("bob") matches "bob" and vice versa.
    @Test func blobMatchingIsByBytes() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp("svc", "bob")) == errSecSuccess)
            #expect(secCopy(genp().with([kSecAttrService as String: "svc", kSecAttrAccount as String: Data("bob".utf8)])).status == errSecSuccess)
            #expect(secAdd(genp().with([kSecAttrService as String: Data("svc2".utf8), kSecAttrAccount as String: Data("eve".utf8)])) == errSecSuccess)
            #expect(secCopy(genp("svc2", "eve")).status == errSecSuccess)
            #expect(secCopy(genp().with(kSecAttrLabel, Data("x".utf8))).status == errSecItemNotFound)
        }
    }

    // §2.4: a number in an S-flag attribute is its 4-byte host-order int32.
    @Test func numberInBlobAttributeMatchesItsInt32Bytes() {
        TemporaryKeychain.with { _ in
            var value = Int32(0x0102_0304)
            let bytes = withUnsafeBytes(of: &value) { Data($0) }
            #expect(secAdd(genp().with(kSecAttrAccount, 0x0102_0304)) == errSecSuccess)
            #expect(secCopy(genp().with(kSecAttrAccount, bytes)).status == errSecSuccess)
            #expect(secCopy(genp().with(kSecAttrAccount, 0x0102_0305)).status == errSecItemNotFound)
        }
    }

    // §2.4: Data attributes (klbl) accept strings as UTF-8.
    @Test func dataAttributesAcceptStrings() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(item(kSecClassKey, [kSecAttrApplicationLabel: "klabel"])) == errSecSuccess)
            #expect(secCopy(item(kSecClassKey, [kSecAttrApplicationLabel: Data("klabel".utf8)])).status == errSecSuccess)
            #expect(secAdd(item(kSecClassCertificate, [kSecAttrSerialNumber: Data("42".utf8)])) == errSecSuccess)
            #expect(secCopy(item(kSecClassCertificate, [kSecAttrSerialNumber: "42"])).status == errSecSuccess)
        }
    }

    // §2.4: String attributes (agrp) accept CFData (UTF-8 decoded).
    @Test func stringAttributesAcceptData() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecAttrAccessGroup, Data("com.example.shared".utf8))) == errSecSuccess)
            let attributes = try #require(attrsOf(genp().with(kSecAttrAccessGroup, "com.example.shared")))
            #expect(asString(attributes["agrp"]) == "com.example.shared")
        }
    }

    // §2.4: number attributes match across representations (port "443" vs 443).
    @Test func numberMatchingAcrossRepresentations() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(inet().with(kSecAttrPort, 443)) == errSecSuccess)
            #expect(secCopy(inet().with(kSecAttrPort, "443")).status == errSecSuccess)
            #expect(secCopy(inet().with(kSecAttrPort, NSNumber(value: Int64(443)))).status == errSecSuccess)
            #expect(secCopy(inet().with(kSecAttrPort, 80)).status == errSecItemNotFound)
        }
    }

    // §2.4: date attributes accept only dates.
    @Test func dateAttributesRejectNonDates() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(keyItem().with(kSecAttrStartDate, "2024-01-01")) == errSecParam)
            #expect(secAdd(keyItem().with(kSecAttrEndDate, 1234)) == errSecParam)
            #expect(secAdd(keyItem().with(kSecAttrStartDate, Data([1]))) == errSecParam)
            #expect(matchCount(item(kSecClassKey)) == 0)
            #expect(secAdd(genp()) == errSecSuccess)
            #expect(secCopy(genp().with(kSecAttrCreationDate, "yesterday")).status == errSecParam)
            #expect(secAdd(keyItem().with(kSecAttrStartDate, Date(timeIntervalSinceReferenceDate: 5))) == errSecSuccess)
        }
    }

    // §2.4: date attributes are matchable.
    @Test func dateAttributeRoundTrip() throws {
        try TemporaryKeychain.with { _ in
            let start = Date(timeIntervalSinceReferenceDate: 700_000_000)
            #expect(secAdd(keyItem().with(kSecAttrStartDate, start)) == errSecSuccess)
            let attributes = try #require(attrsOf(item(kSecClassKey)))
            #expect(asDate(attributes["sdat"]) == start)
            let fractional = Date(timeIntervalSinceReferenceDate: 700_000_123.456789)
            #expect(secAdd(keyItem(tag: "fractional").with(kSecAttrEndDate, fractional)) == errSecSuccess)
            #expect(asDate(attrsOf(item(kSecClassKey, [kSecAttrApplicationTag: Data("fractional".utf8)]))?["edat"]) == fractional)
            #expect(secCopy(item(kSecClassKey, [kSecAttrEndDate: fractional])).status == errSecSuccess)
            #expect(secCopy(item(kSecClassKey, [kSecAttrStartDate: start])).status == errSecSuccess)
            #expect(secCopy(item(kSecClassKey, [kSecAttrStartDate: start.addingTimeInterval(1)])).status == errSecItemNotFound)
        }
    }

    // §2.4: pdmn must be one of ak ck dk aku cku dku akpu, in any operation.
    @Test func invalidAccessibilityIsParam() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            for bad: Any in ["zz", "AK", "", "kSecAttrAccessibleWhenUnlocked", 1, Data("ak".utf8)] {
                let query = genp().with(kSecAttrAccessible, bad)
                #expect(secAdd(genp("other").with(kSecAttrAccessible, bad)) == errSecParam)
                #expect(secCopy(query).status == errSecParam)
                #expect(secUpdate(query, [kSecAttrLabel as String: "x"]) == errSecParam)
                #expect(secDelete(query) == errSecParam)
                #expect(secUpdate(genp(), [kSecAttrAccessible as String: bad]) == errSecParam)
            }
            #expect(matchCount(genp()) == 1)
            #expect(matchCount(genp("other")) == 0)
        }
    }

    // §2.4: every valid accessibility value is accepted and returned.
    @Test func validAccessibilityValuesRoundTrip() {
        TemporaryKeychain.with { _ in
            let values = [
                kSecAttrAccessibleWhenUnlocked, kSecAttrAccessibleAfterFirstUnlock, kSecAttrAccessibleAlways,
                kSecAttrAccessibleWhenUnlockedThisDeviceOnly, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
                kSecAttrAccessibleAlwaysThisDeviceOnly, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly,
            ]
            for value in values {
                let query = genp("svc", value as String)
                let status = secAdd(query.with(kSecAttrAccessible, value))
                #expect(status == errSecSuccess || (value as String == "akpu" && status == errSecNotAvailable), "pdmn \(value)")
                if status == errSecSuccess {
                    #expect(asString(attrsOf(query)?["pdmn"]) == value as String)
                    #expect(secCopy(query.with(kSecAttrAccessible, value)).status == errSecSuccess)
                }
            }
        }
    }

    // §2.4 [T si-11]: kSecValueData must be data.
    @Test func valueDataMustBeData() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with(kSecValueData, "password")) == errSecParam)
            #expect(secAdd(genp().with(kSecValueData, 1234)) == errSecParam)
            #expect(matchCount(genp()) == 0)
            #expect(secAdd(genp().with(kSecValueData, testSecret())) == errSecSuccess)
            #expect(secUpdate(genp(), [kSecValueData as String: "password"]) == errSecParam)
            #expect(secret(of: genp()) == testSecret())
        }
    }

    // §2.3 [T si-15, si-80]: items without data are allowed; r_Data + r_Attributes → dict without v_Data.
    @Test func itemsWithoutData() throws {
        try TemporaryKeychain.with { _ in
            #expect(secAdd(genp()) == errSecSuccess)
            let (status, result) = secCopy(genp().with([kSecReturnData as String: true, kSecReturnAttributes as String: true]))
            #expect(status == errSecSuccess)
            let dictionary = try #require(asDictionary(result))
            #expect(dictionary["v_Data"] == nil)
            #expect(asString(dictionary["acct"]) == "alice")
            // Adding data later makes it retrievable.
            #expect(secUpdate(genp(), [kSecValueData as String: testSecret()]) == errSecSuccess)
            #expect(secret(of: genp()) == testSecret())
        }
    }

    // §3.2 [C, H]: ThisDeviceOnly + sync=true has no server-side check.
    @Test func thisDeviceOnlyWithSynchronizableIsAccepted() {
        TemporaryKeychain.with { _ in
            #expect(secAdd(genp().with([
                kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
                kSecAttrSynchronizable as String: true,
            ])) == errSecSuccess)
        }
    }

    // §2.4: large secrets are fine (errSecDataTooLarge is never produced by DP SecItem).
    @Test func largeSecretsAndMetadataAreAccepted() {
        TemporaryKeychain.with { _ in
            let big = Data(repeating: 0xA5, count: 100 * 1024)
            #expect(secAdd(genp().with([kSecValueData as String: big, kSecAttrComment as String: String(repeating: "c", count: 8 * 1024)])) == errSecSuccess)
            #expect(secret(of: genp()) == big)
        }
    }
}
}
