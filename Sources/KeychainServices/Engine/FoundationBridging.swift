#if !canImport(Security)
import Foundation

/// Keeps Foundation's bridging conformances in every program that links KeychainServices, so
/// the casts an iOS program makes on what `SecItemCopyMatching` and `SecItemAdd` return work
/// however the program is linked.
///
/// A cast such as `result as? [[String: Any]]` or `result as? [NSDictionary]` on the `NSArray`
/// of a `kSecMatchLimitAll` search goes through `Array`'s conformance to
/// `_ObjectiveCBridgeable`, which swift-corelibs-foundation declares in an object file of its
/// own (`Array.swift.o`; `Set`, `Dictionary`, `String`, `Data`, `Date`, the numbers and
/// `AnyHashable` likewise each in theirs). Swift finds conformances at run time by scanning
/// the conformance records linked into the program. Linked with the shared `libFoundation.so`,
/// all of them are there. Linked with Foundation built in (`swift build --static-swift-stdlib`,
/// the usual way to ship a Swift server, and how `make install` builds the tools), the linker
/// takes from `libFoundation.a` only the object files something refers to; nothing referred
/// to `Array.swift.o`, so the cast found no conformance and gave `nil`, silently: listings
/// came back empty and the tools could not delete.
///
/// Calling one function of each of those object files here makes the linker take them, with
/// their conformance records. ``SecItemCopyMatching`` and the other calls evaluate ``linked``
/// once (see `perform` in SecItem.swift), so the reference can never be dropped as unused.
enum FoundationBridging {
    /// The bridged values of empty Swift values, one per object file of Foundation that holds
    /// bridging conformances; evaluated once. Always `true`.
    static let linked: Bool = {
        let anchors: [AnyObject] = [
            [AnyObject]()._bridgeToObjectiveC(),  // Array: NSArray as? [[String: Any]], [NSDictionary], [Data]
            [String: AnyObject]()._bridgeToObjectiveC(),  // Dictionary: NSDictionary as? [String: Any]
            Set<String>()._bridgeToObjectiveC(),  // Set: NSSet as? Set<String>
            String()._bridgeToObjectiveC(),  // String, Substring: NSString as? String
            Data()._bridgeToObjectiveC(),  // Data: NSData as? Data
            Date(timeIntervalSinceReferenceDate: 0)._bridgeToObjectiveC(),  // Date: NSDate as? Date
            0._bridgeToObjectiveC(),  // Int, Bool, Double and the other numbers: NSNumber as? Int
            AnyHashable(0)._bridgeToObjectiveC(),  // AnyHashable: NSDictionary as? [AnyHashable: Any]
        ]
        return anchors.count == 8
    }()
}
#endif
