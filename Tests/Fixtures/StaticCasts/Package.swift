// swift-tools-version:6.0
// A program built as servers ship Swift (`swift build --static-swift-stdlib`: the Swift runtime
// and Foundation linked in) that reads keychain items as iOS code does and checks every cast an
// iOS program makes on what SecItemCopyMatching returns. `make test` builds and runs it.
import PackageDescription

let package = Package(
    name: "StaticCasts",
    dependencies: [
        .package(name: "Keysmith", path: "../../.."),
    ],
    targets: [
        .executableTarget(
            name: "StaticCasts",
            dependencies: [
                .product(name: "KeychainServices", package: "Keysmith"),
                .product(name: "Keysmith", package: "Keysmith"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
