// swift-tools-version:6.0
// Keysmith: one safe way for apps to store their keys and to find them again.
//
// No package from outside the toolchain: C libraries come from the system
// (`.systemLibrary` targets, installed by `make deps`).
import PackageDescription

/// C libraries are needed only where KeychainServices implements the API itself.
let linuxOnly: [Platform] = [.linux]

let package = Package(
    name: "Keysmith",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "KeychainServices", targets: ["KeychainServices"]),
        .library(name: "KeychainAuthentication", targets: ["KeychainAuthentication"]),
        .library(name: "Keysmith", targets: ["Keysmith"]),
        .library(name: "KeysmithEtcd", targets: ["KeysmithEtcd"]),
        .executable(name: "keysmith", targets: ["keysmith"]),
        .executable(name: "keysmith-fleet", targets: ["keysmith-fleet"]),
        .plugin(name: "KeysmithGeneratePlugin", targets: ["KeysmithGeneratePlugin"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        .systemLibrary(
            name: "CKeyutils",
            pkgConfig: "libkeyutils",
            providers: [.apt(["libkeyutils-dev"])]
        ),
        // The authenticators: Linux-PAM for the login password, sd-bus (libsystemd) to reach
        // fprintd, and a small C file that restores the terminal when a signal interrupts a
        // passphrase prompt. CPAM and CSystemdBus give only the headers: neither library is
        // linked, CLoadOnUse loads each when an authenticator first calls it, so a program that
        // never authenticates starts without them (and the libraries behind libsystemd).
        .systemLibrary(
            name: "CPAM",
            providers: [.apt(["libpam0g-dev"])]
        ),
        .systemLibrary(
            name: "CSystemdBus",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // libcurl, the fleet's HTTP client on Linux (every etcd call and the watch stream, TLS with a
        // private CA and client certificates). Only KeysmithEtcd links it: keysmith does not.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(name: "CLoadOnUse"),
        .target(name: "CTerminalGuard"),
        // Core Foundation's one-pass dictionary reader (in Foundation on Linux), for the
        // query parser.
        .target(name: "CFoundationDictionary"),
        .target(
            name: "KeychainServices",
            dependencies: [
                .target(name: "CSQLite", condition: .when(platforms: linuxOnly)),
                .target(name: "CSodium", condition: .when(platforms: linuxOnly)),
                .target(name: "CKeyutils", condition: .when(platforms: linuxOnly)),
                .target(name: "CPAM", condition: .when(platforms: linuxOnly)),
                .target(name: "CSystemdBus", condition: .when(platforms: linuxOnly)),
                .target(name: "CTerminalGuard", condition: .when(platforms: linuxOnly)),
                .target(name: "CLoadOnUse", condition: .when(platforms: linuxOnly)),
                .target(name: "CFoundationDictionary", condition: .when(platforms: linuxOnly)),
            ]
        ),
        // On Apple platforms LocalAuthentication (re-exported); elsewhere LAContext over the
        // authenticators of KeychainServices.
        .target(
            name: "KeychainAuthentication",
            dependencies: [.target(name: "KeychainServices", condition: .when(platforms: linuxOnly))]
        ),
        .target(
            name: "Keysmith",
            dependencies: ["KeychainServices"]
        ),
        // Keys for a fleet on etcd (its JSON gateway; libcurl on Linux, URLSession on Apple
        // platforms). On Linux the sealing (XChaCha20-Poly1305, Argon2id) is libsodium's, already
        // linked by KeychainServices; on Apple platforms it is CryptoKit plus HChaCha20 in Swift.
        .target(
            name: "KeysmithEtcd",
            dependencies: [
                "Keysmith", "KeychainServices",
                .target(name: "CSodium", condition: .when(platforms: linuxOnly)),
                .target(name: "CCurl", condition: .when(platforms: linuxOnly)),
            ]
        ),
        // The tool. KeysmithCLI does not link the etcd client (libcurl and the libraries behind
        // it): a lookup starts without loading them. The fleet
        // commands are in KeysmithFleetCLI and the keysmith-fleet executable, installed beside
        // keysmith, which hands it the command lines that need etcd.
        .target(
            name: "KeysmithCLI",
            dependencies: ["Keysmith", "KeychainServices"]
        ),
        .executableTarget(
            name: "keysmith",
            dependencies: ["KeysmithCLI"]
        ),
        .target(
            name: "KeysmithFleetCLI",
            dependencies: ["KeysmithCLI", "Keysmith", "KeychainServices", "KeysmithEtcd"]
        ),
        .executableTarget(
            name: "keysmith-fleet",
            dependencies: ["KeysmithFleetCLI"]
        ),
        .plugin(
            name: "KeysmithGeneratePlugin",
            capability: .buildTool(),
            dependencies: ["keysmith"]
        ),
        .executableTarget(
            name: "keychain-workload",
            dependencies: ["KeychainServices", "KeychainAuthentication"],
            path: "Tests/Support/keychain-workload"
        ),
        .executableTarget(
            name: "securestore-launch",
            dependencies: ["Keysmith"],
            path: "Tests/Support/securestore-launch"
        ),
        .target(
            name: "CBaseline",
            dependencies: ["CSQLite", "CSodium"],
            path: "Benchmarks/CBaseline"
        ),
        .executableTarget(
            name: "keysmith-empty",
            path: "Benchmarks/keysmith-empty"
        ),
        .executableTarget(
            name: "keysmith-bench",
            dependencies: ["KeychainServices", "Keysmith", "KeysmithEtcd", "CBaseline"],
            path: "Benchmarks/keysmith-bench"
        ),
        .testTarget(
            name: "KeychainServicesTests",
            dependencies: [
                "KeychainServices",
                "KeychainAuthentication",
                .target(name: "CSQLite", condition: .when(platforms: linuxOnly)),
                .target(name: "CLoadOnUse", condition: .when(platforms: linuxOnly)),
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "KeysmithTests",
            dependencies: ["Keysmith", "KeychainServices"]
        ),
        .testTarget(
            name: "KeysmithEtcdTests",
            dependencies: [
                "KeysmithEtcd", "Keysmith", "KeychainServices", "KeysmithCLI", "KeysmithFleetCLI",
                .target(name: "CSodium", condition: .when(platforms: linuxOnly)),
            ]
        ),
        .testTarget(
            name: "KeysmithCLITests",
            dependencies: [
                "KeysmithCLI", "Keysmith", "KeychainServices",
                // The TPM key store's tests unseal the device key themselves, to look for it in the files.
                .target(name: "CLoadOnUse", condition: .when(platforms: linuxOnly)),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Credential helpers for git and Docker (`git-credential-keysmith`,
// `docker-credential-keysmith`): the protocols live in KeysmithCredentialHelpers, which
// uses the keychain in process; the executables are thin.
package.products += [
    .executable(name: "git-credential-keysmith", targets: ["git-credential-keysmith"]),
    .executable(name: "docker-credential-keysmith", targets: ["docker-credential-keysmith"]),
]
package.targets += [
    .target(
        name: "KeysmithCredentialHelpers",
        dependencies: ["KeychainServices"]
    ),
    .executableTarget(
        name: "git-credential-keysmith",
        dependencies: ["KeysmithCredentialHelpers"]
    ),
    .executableTarget(
        name: "docker-credential-keysmith",
        dependencies: ["KeysmithCredentialHelpers"]
    ),
    .testTarget(
        name: "KeysmithCredentialHelpersTests",
        dependencies: ["KeysmithCredentialHelpers", "KeychainServices"]
    ),
]

// The C interface (include/keysmith.h): libKeysmithC.so, which `make c-abi` copies to
// .build/c/<configuration>/libkeysmith.so with the Swift runtime libraries it needs beside it
// (found through its $ORIGIN run path), so a C, Node or Python program loads it without the
// Swift toolchain installed or on its library path. It exports only the keysmith_* functions
// (bindings/c/keysmith.map). (-static-stdlib is not used: with Swift 6.3.1 on Linux a
// statically linked Foundation fails casts such as NSArray to [Any], which the keychain's
// results go through.)
#if os(Linux)
let keysmithCLinkerSettings: [LinkerSetting] = [
    .unsafeFlags([
        "-no-toolchain-stdlib-rpath", "-Xlinker", "-rpath=$ORIGIN", "-Xlinker", "-soname=libkeysmith.so",
        "-Xlinker", "--version-script=\(Context.packageDirectory)/bindings/c/keysmith.map",
    ])
]
#else
let keysmithCLinkerSettings: [LinkerSetting] = []
#endif
package.products += [
    .library(name: "KeysmithC", type: .dynamic, targets: ["KeysmithC"])
]
package.targets += [
    .target(
        name: "KeysmithC",
        dependencies: [
            "Keysmith", "KeychainServices",
            .target(name: "CSodium", condition: .when(platforms: linuxOnly)),
        ],
        linkerSettings: keysmithCLinkerSettings
    )
]
// The Swift SecureStore from the command line, for the JavaScript package's interoperability tests.
package.targets += [
    .executableTarget(
        name: "securestore-interop",
        dependencies: ["Keysmith"],
        path: "Tests/Support/securestore-interop"
    )
]

// The freedesktop Secret Service on the keychain: `keysmith secret-service` runs
// `keysmith-secret-service`, installed beside keysmith, which serves org.freedesktop.secrets on
// the session bus (sd-bus from libsystemd) and encrypts the dh-ietf1024-sha256-aes128-cbc-pkcs7
// session with libcrypto. Neither library is linked into keysmith itself. Linux only.
#if os(Linux)
package.products += [
    .executable(name: "keysmith-secret-service", targets: ["keysmith-secret-service"])
]
package.targets += [
    .systemLibrary(
        name: "COpenSSL",
        pkgConfig: "libcrypto",
        providers: [.apt(["libssl-dev"])]
    ),
    .target(
        name: "KeysmithSecretService",
        dependencies: ["Keysmith", "KeychainServices", "CSystemdBus", "COpenSSL", "CSodium"],
        linkerSettings: [.linkedLibrary("systemd")]
    ),
    .executableTarget(
        name: "keysmith-secret-service",
        dependencies: ["KeysmithSecretService"]
    ),
    .testTarget(
        name: "KeysmithSecretServiceTests",
        dependencies: ["KeysmithSecretService", "Keysmith", "KeychainServices"],
        exclude: ["Fixtures"]
    ),
]
#endif
