// swift-tools-version:6.0
// A package whose keychain code imports only Foundation, as many files written for Apple
// platforms do (there `import Foundation` also brings Security's names). One setting makes
// every file of the target see KeychainServices; warnings are errors, so a keychain call
// whose result is ignored must compile as quietly as on Apple platforms.
import PackageDescription

let package = Package(
    name: "ImplicitImport",
    dependencies: [
        .package(name: "Keysmith", path: "../../.."),
    ],
    targets: [
        .executableTarget(
            name: "ImplicitImport",
            dependencies: [.product(name: "KeychainServices", package: "Keysmith")],
            swiftSettings: [
                .unsafeFlags(["-Xfrontend", "-import-module", "-Xfrontend", "KeychainServices"]),
                .unsafeFlags(["-warnings-as-errors"]),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
