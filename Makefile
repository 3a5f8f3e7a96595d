# Keysmith: `make demo` and `make test` work on a fresh machine (they install what is missing).
SWIFT ?= swift
SWIFT_FLAGS ?=
# gcc: the durability test builds a small C library that reports fsync calls (LD_PRELOAD).
# etcd: the fleet tests start etcd servers on loopback (openssl makes their TLS certificates).
# libcurl4-openssl-dev: the fleet's HTTP client (keysmith-fleet only; keysmith does not link it).
# libpam0g-dev, libsystemd-dev: the login-password (PAM) and fingerprint (fprintd over sd-bus)
# authenticators. Tests only: db5.3-util (the PAM tests' pam_userdb database), and fprintd,
# dbus-daemon and python3-dbusmock (the fingerprint tests run fprintd with libfprint's virtual
# reader on a private bus, with a polkit stand-in; never the machine's system bus); keyutils
# (keyctl: a test shares a session keyring between two uids). libsecret-tools: secret-tool, the
# Secret Service tests' client (python3-dbus, from python3-dbusmock, is the other).
# libtss2-dev, swtpm, swtpm-tools: the TPM key store (its tests run software TPMs on loopback;
# tpm2-tools only checks from outside).
APT_PACKAGES := libsqlite3-dev libsodium-dev libkeyutils-dev pkg-config gcc etcd-server etcd-client openssl \
	libpam0g-dev libsystemd-dev db5.3-util fprintd dbus-daemon python3-dbusmock libcurl4-openssl-dev keyutils \
	libtss2-dev swtpm swtpm-tools tpm2-tools libsecret-tools
BREW_PACKAGES := sqlite libsodium pkg-config etcd
# bench only: libsecret (headers for .build/secret-bench, secret-tool) and gnome-keyring with
# dbus-run-session, to compare with; `make test` does not need them.
BENCH_APT_PACKAGES := $(APT_PACKAGES) libsecret-1-dev libsecret-tools gnome-keyring dbus-daemon time
SUDO := $(shell [ "$$(id -u)" = "0" ] && echo "" || echo "sudo")

# The installed tools are linked with the Swift runtime and Foundation built in
# (-static-stdlib): a process starts in about half the time (docs/BENCHMARKS.md, "Start-up").
# They are built in their own scratch directory, so the debug and release builds of the
# package are not rebuilt with other flags. keysmith-fleet (the fleet commands' etcd client;
# keysmith itself does not link it) links libcurl, whose development files it needs.
STATIC_BUILD := --static-swift-stdlib --scratch-path .build/static
# What building the installed tools needs, and nothing the tests alone need (etcd, fprintd, ...).
BUILD_APT_PACKAGES := libsqlite3-dev libsodium-dev libkeyutils-dev pkg-config gcc libpam0g-dev libsystemd-dev \
	libcurl4-openssl-dev libtss2-dev
STATIC_APT_PACKAGES := $(BUILD_APT_PACKAGES)

PREFIX ?= /usr/local
# What `make install` puts in $(PREFIX)/bin (and `make uninstall` removes): the keysmith tool,
# keysmith-fleet beside it (keysmith runs it for the fleet commands), and the git and Docker
# credential helpers.
INSTALLED_EXECUTABLES := keysmith keysmith-fleet git-credential-keysmith docker-credential-keysmith
# On Linux also keysmith-secret-service (`keysmith secret-service` runs it), with its D-Bus activation
# file and systemd user unit (see "The Secret Service" below).
ifeq ($(shell uname),Linux)
INSTALLED_EXECUTABLES += keysmith-secret-service
endif
# The Python keyring backend's tests run in this virtual environment (keyring from PyPI),
# kept under .build so reruns are quick; it is rebuilt when bindings/python/pyproject.toml changes.
PYTHON ?= python3
PYTHON_VENV := .build/python-venv

.PHONY: all deps build test demo bench stress clean install uninstall test-python test-installed bench-credential-helpers

all: build

## deps: install the system libraries the package links (idempotent).
deps:
	@if [ "$$(uname)" = "Darwin" ]; then \
		echo "macOS: KeychainServices re-exports Security; for the Linux engine's libraries run: brew install $(BREW_PACKAGES)"; \
	elif command -v dpkg-query >/dev/null 2>&1; then \
		missing=""; \
		for p in $(APT_PACKAGES); do \
			dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
		done; \
		if [ -n "$$missing" ]; then \
			echo "Installing:$$missing"; \
			$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
		fi; \
	else \
		echo "Please install sqlite3 and libsodium development packages (and pkg-config) with your package manager."; \
	fi

## build: debug build of every target.
build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

## test: the whole test suite (unit, conformance, integration, fast reliability tests).
test: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	@# A safety net: should any test forget its temporary keychain, it lands here, not in ~/.local.
	@# Every test uses Swift Testing: --disable-xctest skips XCTest's empty "Executed 0 tests" run.
	home=$$(mktemp -d) && KEYSMITH_HOME=$$home $(SWIFT) test --skip-build --disable-xctest $(SWIFT_FLAGS); status=$$?; rm -rf "$$home"; exit $$status
	@# Apple platforms cannot be built here: build Keysmith and the tool against only what Security also provides.
	@# (keysmith contains Keysmith and the CLI, keysmith-fleet also KeysmithEtcd; then the credential helpers.
	@# keysmith-secret-service is Linux only: sd-bus and libcrypto.)
	for product in $(filter-out keysmith-secret-service,$(INSTALLED_EXECUTABLES)); do \
		$(SWIFT) build $(SWIFT_FLAGS) --scratch-path "$(CURDIR)/.build/apple-surface" -Xswiftc -DKEYSMITH_APPLE_SURFACE --product $$product || exit 1; \
	done
	@# A package whose keychain code imports only Foundation, with KeychainServices imported by one setting.
	@# (SwiftPM does not notice files added to a path dependency: a changed file list starts it afresh.)
	@list=$$(find Sources -name '*.swift' | sort | cksum); stamp=.build/fixtures/implicit-import.sources; \
		if [ "$$(cat $$stamp 2>/dev/null)" != "$$list" ]; then rm -rf .build/fixtures/implicit-import; mkdir -p .build/fixtures; echo "$$list" > $$stamp; fi
	$(SWIFT) build $(SWIFT_FLAGS) --package-path Tests/Fixtures/ImplicitImport --scratch-path "$(CURDIR)/.build/fixtures/implicit-import"
	home=$$(mktemp -d) && KEYSMITH_HOME=$$home "$$($(SWIFT) build $(SWIFT_FLAGS) --package-path Tests/Fixtures/ImplicitImport \
		--scratch-path "$(CURDIR)/.build/fixtures/implicit-import" --show-bin-path)/ImplicitImport"; status=$$?; rm -rf "$$home"; exit $$status
	@# A program built as Swift servers ship (--static-swift-stdlib: runtime and Foundation linked in) checks every cast
	@# iOS code makes on SecItem results. Its own scratch directory; a changed file list starts it afresh (as above).
	@list=$$(find Sources -name '*.swift' | sort | cksum); stamp=.build/fixtures/static-casts.sources; \
		if [ "$$(cat $$stamp 2>/dev/null)" != "$$list" ]; then rm -rf .build/fixtures/static-casts; mkdir -p .build/fixtures; echo "$$list" > $$stamp; fi
	$(SWIFT) build $(SWIFT_FLAGS) --static-swift-stdlib --package-path Tests/Fixtures/StaticCasts --scratch-path "$(CURDIR)/.build/fixtures/static-casts"
	home=$$(mktemp -d) && KEYSMITH_HOME=$$home "$$($(SWIFT) build $(SWIFT_FLAGS) --static-swift-stdlib --package-path Tests/Fixtures/StaticCasts \
		--scratch-path "$(CURDIR)/.build/fixtures/static-casts" --show-bin-path)/StaticCasts"; status=$$?; rm -rf "$$home"; exit $$status
	@$(MAKE) --no-print-directory test-python
	@$(MAKE) --no-print-directory test-installed
	@$(MAKE) --no-print-directory test-c
	@$(MAKE) --no-print-directory test-node
	@$(MAKE) --no-print-directory test-secret-service

## test-python: the keyring backend's tests (bindings/python), against the built keysmith.
test-python: $(PYTHON_VENV)/.ready
	$(SWIFT) build $(SWIFT_FLAGS) --product keysmith
	home=$$(mktemp -d) && KEYSMITH_HOME=$$home KEYSMITH_EXECUTABLE="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/keysmith" \
		$(PYTHON_VENV)/bin/python -m pytest -q bindings/python/tests; status=$$?; rm -rf "$$home"; exit $$status

## test-installed: `make install` into a temporary PREFIX (the static release tools, built incrementally in
## .build/static), then, against those installed tools: the command tests of add, find, delete, dump, migrate-service,
## rotate and export/import (KEYSMITH_TEST_TOOLS points the tests at them), the git and Docker helpers' tests (store,
## get, erase, list) and the Python backend's tests. Needs the test build (swift build --build-tests).
INSTALLED_TEST_FILTER := ItemCommandTests|MigrateAndGenerateTests/migrateService|KeychainStateCommandTests/exportAndImport|RetrievalCommandTests/rotate|GitCredentialHelperTests|DockerCredentialHelperTests
test-installed: $(PYTHON_VENV)/.ready
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	prefix=$$(mktemp -d) && $(MAKE) --no-print-directory install PREFIX="$$prefix" && home=$$(mktemp -d) && \
		KEYSMITH_HOME=$$home KEYSMITH_TEST_TOOLS="$$prefix/bin" $(SWIFT) test --skip-build --disable-xctest $(SWIFT_FLAGS) \
			--filter '$(INSTALLED_TEST_FILTER)' && \
		KEYSMITH_HOME=$$home KEYSMITH_EXECUTABLE="$$prefix/bin/keysmith" $(PYTHON_VENV)/bin/python -m pytest -q bindings/python/tests; \
		status=$$?; rm -rf "$$home" "$$prefix"; exit $$status

$(PYTHON_VENV)/.ready: bindings/python/pyproject.toml
	rm -rf $(PYTHON_VENV)
	$(PYTHON) -m venv $(PYTHON_VENV) || { $(SUDO) apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(PYTHON_VENV); }
	$(PYTHON_VENV)/bin/python -m pip install -q --disable-pip-version-check keyring keyrings.alt pytest "setuptools>=70.1" wheel
	$(PYTHON_VENV)/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps -e bindings/python
	touch $@

## install: release builds (Swift runtime linked in) of the keysmith tool (with keysmith-fleet and, on Linux,
## keysmith-secret-service) and the git and Docker credential helpers, in $(PREFIX)/bin (PREFIX=/usr/local by
## default); on Linux also the Secret Service's D-Bus activation file and systemd user unit (see below). The
## Python keyring backend installs with pip: pip install ./bindings/python.
install:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(STATIC_APT_PACKAGES)"
	for product in $(INSTALLED_EXECUTABLES); do $(SWIFT) build -c release $(SWIFT_FLAGS) $(STATIC_BUILD) --product $$product || exit 1; done
	install -d "$(DESTDIR)$(PREFIX)/bin"
	bin="$$($(SWIFT) build -c release $(SWIFT_FLAGS) $(STATIC_BUILD) --show-bin-path)" && \
		for product in $(INSTALLED_EXECUTABLES); do install -m 0755 "$$bin/$$product" "$(DESTDIR)$(PREFIX)/bin/$$product" || exit 1; done
	@$(MAKE) --no-print-directory install-secret-service-files

## uninstall: removes what install put in place (the tools, the activation file and the user unit).
uninstall:
	for product in $(INSTALLED_EXECUTABLES); do rm -f "$(DESTDIR)$(PREFIX)/bin/$$product"; done
	@$(MAKE) --no-print-directory uninstall-secret-service-files

## demo: walkthroughs with the keysmith tool on temporary keychains: the keychain items first
## (add, find, lock, the read refused, unlock), then an app's keys (lookup and rotation).
demo: deps
	$(SWIFT) build $(SWIFT_FLAGS) --product keysmith
	"$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/keysmith" demo --items
	@echo
	"$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/keysmith" demo

## bench: release-build benchmarks; prints the table and writes docs/BENCHMARKS.md.
## Also builds the keysmith CLI (whole-process benchmark) and .build/secret-bench, the C
## program that measures libsecret and gnome-keyring (the package never links libsecret), and the
## JavaScript package in release mode (make node C_ABI_CONFIG=release) for its get row.
bench:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(BENCH_APT_PACKAGES)"
	$(SWIFT) build -c release $(SWIFT_FLAGS) --product keysmith-bench
	@$(MAKE) --no-print-directory node C_ABI_CONFIG=release
	@# The CLI as make install ships it (static), and an empty program built the same way.
	$(SWIFT) build -c release $(SWIFT_FLAGS) $(STATIC_BUILD) --product keysmith \
		|| { rm -f "$$($(SWIFT) build -c release $(SWIFT_FLAGS) $(STATIC_BUILD) --show-bin-path)/keysmith"; \
		     echo "keysmith CLI did not build: its process benchmark will say so"; }
	$(SWIFT) build -c release $(SWIFT_FLAGS) $(STATIC_BUILD) --product keysmith-empty
	@mkdir -p .build
	gcc -O2 -Wall -o .build/secret-bench Benchmarks/libsecret/secret-bench.c $$(pkg-config --cflags --libs libsecret-1 libgcrypt) \
		|| { rm -f .build/secret-bench; echo "secret-bench did not build: the libsecret rows will say so"; }
	static="$$($(SWIFT) build -c release $(SWIFT_FLAGS) $(STATIC_BUILD) --show-bin-path)" && \
	SECRET_BENCH="$(CURDIR)/.build/secret-bench" KEYSMITH_CLI="$$static/keysmith" KEYSMITH_EMPTY="$$static/keysmith-empty" \
		"$$($(SWIFT) build -c release $(SWIFT_FLAGS) --show-bin-path)/keysmith-bench" --write-docs docs/BENCHMARKS.md
	@$(MAKE) --no-print-directory bench-credential-helpers
	@$(MAKE) --no-print-directory bench-secret-service

## bench-credential-helpers: whole-process `git credential fill` with git-credential-keysmith (built
## as make install ships it), git's plaintext store helper and git-credential-libsecret on
## gnome-keyring (same run);
## writes docs/CREDENTIAL_HELPERS_BENCHMARKS.md.
bench-credential-helpers:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(BENCH_APT_PACKAGES)"
	$(SWIFT) build -c release $(SWIFT_FLAGS) $(STATIC_BUILD) --product git-credential-keysmith
	Benchmarks/credential-helpers/credential-fill-bench.sh \
		"$$($(SWIFT) build -c release $(SWIFT_FLAGS) $(STATIC_BUILD) --show-bin-path)" docs/CREDENTIAL_HELPERS_BENCHMARKS.md

## stress: the slow reliability runs (200 SIGKILLs, longer contention and fuzzing).
stress: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	KEYSMITH_STRESS=1 $(SWIFT) test --skip-build --disable-xctest $(SWIFT_FLAGS) --filter "CrashSafety|Contention|Fuzz|FullDisk|Durability"
	@# 1,000 keychains created, unlocked and deleted by a user who is not root (make test runs enough to pass the key quota).
	KEYSMITH_STRESS_KEYCHAINS=1000 $(SWIFT) test --skip-build --disable-xctest $(SWIFT_FLAGS) --filter "UnlockStateQuotaTests/deletedKeychainsNeverStopTheNextUnlock"

clean:
	rm -rf .build

## c-abi: libkeysmith.so (the C interface, include/keysmith.h) in .build/c/$(C_ABI_CONFIG), with
## the Swift runtime libraries it needs copied beside it (its run path is $ORIGIN), so a program
## that is not Swift loads it without the toolchain: link with -Iinclude -L.build/c/debug
## -lkeysmith -Wl,-rpath,<that directory>, or copy the directory's .so files next to the program.
C_ABI_CONFIG ?= debug
C_ABI_DIR := .build/c/$(C_ABI_CONFIG)
.PHONY: c-abi test-c
c-abi: deps
	$(SWIFT) build -c $(C_ABI_CONFIG) $(SWIFT_FLAGS) --product KeysmithC
	@mkdir -p $(C_ABI_DIR)
	bin="$$($(SWIFT) build -c $(C_ABI_CONFIG) $(SWIFT_FLAGS) --show-bin-path)" && \
		runtime="$$(readlink -f "$$(dirname "$$(readlink -f "$$(command -v $(SWIFT))")")/../lib/swift/linux")" && \
		cp -f "$$bin/libKeysmithC.so" $(C_ABI_DIR)/libkeysmith.so && \
		for lib in $$(LD_LIBRARY_PATH="$$runtime" ldd $(C_ABI_DIR)/libkeysmith.so | awk -v dir="$$runtime/" 'index($$3, dir) == 1 { print $$3 }'); do \
			cp -f "$$lib" $(C_ABI_DIR)/ || exit 1; \
		done
	@if ldd $(C_ABI_DIR)/libkeysmith.so | grep -q "not found"; then ldd $(C_ABI_DIR)/libkeysmith.so | grep "not found"; exit 1; fi

## test-c: the C interface's test program (bindings/c/test), built with gcc, on a temporary keychain.
test-c: c-abi
	gcc -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -Iinclude -o $(C_ABI_DIR)/keysmith-test bindings/c/test/keysmith_test.c \
		-L$(C_ABI_DIR) -lkeysmith -Wl,-rpath,'$$ORIGIN' -lpthread
	home=$$(mktemp -d) && env -u LD_LIBRARY_PATH KEYSMITH_HOME=$$home $(C_ABI_DIR)/keysmith-test; status=$$?; rm -rf "$$home"; exit $$status

## node: the JavaScript package (bindings/node): the C interface, the Node-API addon
## (bindings/node/build/keysmith.node, built with gcc, with libkeysmith.so and the Swift
## runtime libraries beside it) and the TypeScript compiled to bindings/node/lib.
## The addon is linked with -z nodelete: Node unloads an addon when the worker thread that
## loaded it exits, and the Swift runtime it brings cannot be unloaded (its thread-exit
## handlers would run in unmapped code).
NODE_DIR := bindings/node
NODE_APT_PACKAGES := nodejs node-typescript
.PHONY: node node-deps test-node
node-deps:
	@missing=""; \
		command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
		command -v tsc >/dev/null 2>&1 || missing="$$missing node-typescript"; \
		[ -f /usr/include/node/node_api.h ] || missing="$$missing libnode-dev"; \
		if [ -n "$$missing" ]; then \
			echo "Installing:$$missing"; \
			$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
		fi

node: node-deps c-abi
	@mkdir -p $(NODE_DIR)/build
	gcc -std=c11 -D_DEFAULT_SOURCE -O2 -fPIC -shared -Wall -Wextra -Werror -Iinclude -I/usr/include/node \
		-DNODE_GYP_MODULE_NAME=keysmith -o $(NODE_DIR)/build/keysmith.node $(NODE_DIR)/native/keysmith_addon.c \
		-L$(C_ABI_DIR) -lkeysmith -Wl,-rpath,'$$ORIGIN' -Wl,-z,nodelete
	cp -f $(C_ABI_DIR)/*.so $(NODE_DIR)/build/
	cd $(NODE_DIR) && tsc -p .

## test-node: the package's tests (node --test), through the real addon on a temporary keychain,
## with the keysmith tool and the Swift SecureStore (securestore-interop) for interoperability.
test-node: node
	$(SWIFT) build $(SWIFT_FLAGS) --product keysmith
	$(SWIFT) build $(SWIFT_FLAGS) --product securestore-interop
	bin="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)" && home=$$(mktemp -d) && \
		KEYSMITH_HOME=$$home KEYSMITH_EXECUTABLE="$$bin/keysmith" SECURESTORE_INTEROP="$$bin/securestore-interop" \
		node --test $(NODE_DIR)/test/*.test.js; status=$$?; rm -rf "$$home"; exit $$status

# ---------------------------------------------------------------------------------------------
# The Secret Service (keysmith secret-service): its tests on private buses, its activation file
# and systemd user unit, and its benchmark against gnome-keyring.
# Every test starts its own dbus-daemon (Tests/SecretService/with-private-bus.sh), never the
# machine's session bus. gnome-keyring is the mark the same suites run against; secret-tool
# (libsecret-tools) is the libsecret client; libssl-dev is the DH session's libcrypto; systemd
# has busctl, which the Swift bus tests (make test's swift test, before these targets) call with.
SECRET_SERVICE_APT_PACKAGES := dbus-daemon dbus-bin libsecret-tools gnome-keyring libssl-dev systemd
APT_PACKAGES += libssl-dev dbus-bin systemd
BUILD_APT_PACKAGES += libssl-dev
STATIC_APT_PACKAGES += libssl-dev
BENCH_APT_PACKAGES += libssl-dev
SECRET_SERVICE_VENV := .build/secret-service-venv
SECRETSTORAGE_VERSION := $(shell sed -n 's/^secretstorage==//p' Tests/SecretService/requirements.txt)
SECRETSTORAGE_SOURCE := .build/secretstorage-src/secretstorage-$(SECRETSTORAGE_VERSION)
DBUS_SERVICES_DIR := $(PREFIX)/share/dbus-1/services
SYSTEMD_USER_DIR := $(PREFIX)/lib/systemd/user
.PHONY: test-secret-service test-secret-service-mark test-secret-service-packaging install-secret-service-files \
	uninstall-secret-service-files bench-secret-service secret-service-deps

secret-service-deps:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(SECRET_SERVICE_APT_PACKAGES)"

# The outside suites' packages (pinned in Tests/SecretService/requirements.txt) and secretstorage's
# source release of the same version, whose tests/ is its own test suite.
$(SECRET_SERVICE_VENV)/.ready: Tests/SecretService/requirements.txt
	rm -rf $(SECRET_SERVICE_VENV) .build/secretstorage-src
	$(PYTHON) -m venv $(SECRET_SERVICE_VENV) || { $(SUDO) apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(SECRET_SERVICE_VENV); }
	$(SECRET_SERVICE_VENV)/bin/python -m pip install -q --disable-pip-version-check -r Tests/SecretService/requirements.txt
	mkdir -p .build/secretstorage-src
	$(SECRET_SERVICE_VENV)/bin/python -m pip download -q --disable-pip-version-check --no-binary :all: --no-deps \
		-d .build/secretstorage-src secretstorage==$(SECRETSTORAGE_VERSION)
	tar -xzf .build/secretstorage-src/secretstorage-$(SECRETSTORAGE_VERSION).tar.gz -C .build/secretstorage-src
	touch $@

## test-secret-service: keysmith secret-service on private buses: secretstorage's own test suite (dh and
## plain sessions), keyring's BackendBasicTests on its SecretService backend, both session algorithms,
## secret-tool store/lookup/search/clear and interop with the keysmith tool, bad input, the command line (ready
## line, a second server refused, --replace, SIGTERM, the bus going away), the lock state (keysmith lock and
## unlock seen through the bus, PropertiesChanged, the Unlock prompt with and without KEYSMITH_ASKPASS);
## the same suites against gnome-keyring
## first (the mark); then the activation file and user unit (test-secret-service-packaging).
## KEYSMITH_TEST_TOOLS=DIR tests the keysmith and keysmith-secret-service in DIR instead of the debug build.
test-secret-service: secret-service-deps $(SECRET_SERVICE_VENV)/.ready
	@# The mark is gnome-keyring's result, not ours: gnome-keyring-daemon has been seen to abort (a GLib
	@# assertion) in a run here, so a failed mark run is run once more, and when it fails again the mark
	@# is reported as not measured and keysmith's own runs below still decide the result.
	SECRETSTORAGE_SOURCE="$(CURDIR)/$(SECRETSTORAGE_SOURCE)" Tests/SecretService/run-outside-suites.sh gnome-keyring \
		|| SECRETSTORAGE_SOURCE="$(CURDIR)/$(SECRETSTORAGE_SOURCE)" Tests/SecretService/run-outside-suites.sh gnome-keyring \
		|| echo "test-secret-service: WARNING: the mark (gnome-keyring's run of the same suites) failed twice; see its output above. keysmith's runs follow."
	@if [ -z "$(KEYSMITH_TEST_TOOLS)" ]; then \
		$(SWIFT) build $(SWIFT_FLAGS) --product keysmith && $(SWIFT) build $(SWIFT_FLAGS) --product keysmith-secret-service || exit 1; \
	fi
	@# Every part runs, and the target fails at the end when one did.
	tools="$(KEYSMITH_TEST_TOOLS)"; [ -n "$$tools" ] || tools="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)"; failed=""; \
		SECRETSTORAGE_SOURCE="$(CURDIR)/$(SECRETSTORAGE_SOURCE)" Tests/SecretService/run-outside-suites.sh keysmith "$$tools" \
			|| failed="$$failed outside-suites"; \
		Tests/SecretService/command-line-test.sh "$$tools" || failed="$$failed command-line"; \
		Tests/SecretService/lock-test.sh "$$tools" || failed="$$failed lock"; \
		$(MAKE) --no-print-directory test-secret-service-packaging || failed="$$failed packaging"; \
		if [ -n "$$failed" ]; then echo "test-secret-service: failed:$$failed"; exit 1; fi

## test-secret-service-mark: only the gnome-keyring run of the suites (what keysmith is measured against).
test-secret-service-mark: secret-service-deps $(SECRET_SERVICE_VENV)/.ready
	SECRETSTORAGE_SOURCE="$(CURDIR)/$(SECRETSTORAGE_SOURCE)" Tests/SecretService/run-outside-suites.sh gnome-keyring

## test-secret-service-packaging: `make install` into a temporary PREFIX puts the activation file and the
## user unit in place with that PREFIX's paths, `make uninstall` removes them, and a client's call on a
## private bus whose service directory is the installed one starts keysmith secret-service.
test-secret-service-packaging: secret-service-deps
	Tests/SecretService/packaging-test.sh

## install-secret-service-files: the D-Bus activation file and the systemd user unit (Linux; part of install).
install-secret-service-files:
	@if [ "$$(uname)" = "Linux" ]; then \
		install -d "$(DESTDIR)$(DBUS_SERVICES_DIR)" "$(DESTDIR)$(SYSTEMD_USER_DIR)" && \
		sed 's|@PREFIX@|$(PREFIX)|g' packaging/dbus/org.freedesktop.secrets.service.in > "$(DESTDIR)$(DBUS_SERVICES_DIR)/org.freedesktop.secrets.service" && \
		sed 's|@PREFIX@|$(PREFIX)|g' packaging/systemd/keysmith-secret-service.service.in > "$(DESTDIR)$(SYSTEMD_USER_DIR)/keysmith-secret-service.service" && \
		chmod 0644 "$(DESTDIR)$(DBUS_SERVICES_DIR)/org.freedesktop.secrets.service" "$(DESTDIR)$(SYSTEMD_USER_DIR)/keysmith-secret-service.service" && \
		echo "installed $(DESTDIR)$(DBUS_SERVICES_DIR)/org.freedesktop.secrets.service and $(DESTDIR)$(SYSTEMD_USER_DIR)/keysmith-secret-service.service"; \
	fi

## uninstall-secret-service-files: removes what install-secret-service-files put in place.
uninstall-secret-service-files:
	rm -f "$(DESTDIR)$(DBUS_SERVICES_DIR)/org.freedesktop.secrets.service" "$(DESTDIR)$(SYSTEMD_USER_DIR)/keysmith-secret-service.service"

## bench-secret-service: `secret-tool lookup` and SearchItems + GetSecrets through the bus, keysmith
## secret-service (as make install ships it) against gnome-keyring, same run; writes
## docs/SECRET_SERVICE_BENCHMARKS.md. RUNS=N sets the number of timed runs (default 200).
bench-secret-service: secret-service-deps $(SECRET_SERVICE_VENV)/.ready
	for product in keysmith keysmith-secret-service; do $(SWIFT) build -c release $(SWIFT_FLAGS) $(STATIC_BUILD) --product $$product || exit 1; done
	Benchmarks/secret-service/secret-service-bench.sh \
		"$$($(SWIFT) build -c release $(SWIFT_FLAGS) $(STATIC_BUILD) --show-bin-path)" docs/SECRET_SERVICE_BENCHMARKS.md
