# Keysmith: `make demo` and `make test` work on a fresh machine (they install what is missing).
SWIFT ?= swift
SWIFT_FLAGS ?=
# gcc: the durability test builds a small C library that reports fsync calls (LD_PRELOAD).
# etcd: the fleet tests start etcd servers on loopback.
APT_PACKAGES := libsqlite3-dev libsodium-dev pkg-config gcc etcd-server etcd-client
BREW_PACKAGES := sqlite libsodium pkg-config etcd
# bench only: libsecret (headers for .build/secret-bench, secret-tool) and gnome-keyring with
# dbus-run-session, to compare with; `make test` does not need them.
BENCH_APT_PACKAGES := $(APT_PACKAGES) libsecret-1-dev libsecret-tools gnome-keyring dbus-daemon
SUDO := $(shell [ "$$(id -u)" = "0" ] && echo "" || echo "sudo")

PREFIX ?= /usr/local

.PHONY: all deps build test demo bench stress clean install uninstall

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
	$(SWIFT) build $(SWIFT_FLAGS) --scratch-path "$(CURDIR)/.build/apple-surface" -Xswiftc -DKEYSMITH_APPLE_SURFACE --product keysmith
	@# A package whose keychain code imports only Foundation, with KeychainServices imported by one setting.
	$(SWIFT) build $(SWIFT_FLAGS) --package-path Tests/Fixtures/ImplicitImport --scratch-path "$(CURDIR)/.build/fixtures/implicit-import"
	home=$$(mktemp -d) && KEYSMITH_HOME=$$home "$$($(SWIFT) build $(SWIFT_FLAGS) --package-path Tests/Fixtures/ImplicitImport \
		--scratch-path "$(CURDIR)/.build/fixtures/implicit-import" --show-bin-path)/ImplicitImport"; status=$$?; rm -rf "$$home"; exit $$status

## install: release build of the keysmith tool, copied to $(PREFIX)/bin (PREFIX=/usr/local by default).
install: deps
	$(SWIFT) build -c release $(SWIFT_FLAGS) --product keysmith
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -m 0755 "$$($(SWIFT) build -c release $(SWIFT_FLAGS) --show-bin-path)/keysmith" "$(DESTDIR)$(PREFIX)/bin/keysmith"

## uninstall: removes $(PREFIX)/bin/keysmith.
uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/keysmith"

## demo: the main job, a walkthrough with the keysmith tool on a temporary keychain.
demo: deps
	$(SWIFT) build $(SWIFT_FLAGS) --product keysmith
	"$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/keysmith" demo

## bench: release-build benchmarks; prints the table and writes docs/BENCHMARKS.md.
## Also builds the keysmith CLI (whole-process benchmark) and .build/secret-bench, the C
## program that measures libsecret and gnome-keyring (the package never links libsecret).
bench:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(BENCH_APT_PACKAGES)"
	$(SWIFT) build -c release $(SWIFT_FLAGS) --product keysmith-bench
	$(SWIFT) build -c release $(SWIFT_FLAGS) --product keysmith \
		|| { rm -f "$$($(SWIFT) build -c release $(SWIFT_FLAGS) --show-bin-path)/keysmith"; \
		     echo "keysmith CLI did not build: its process benchmark will say so"; }
	@mkdir -p .build
	gcc -O2 -Wall -o .build/secret-bench Benchmarks/libsecret/secret-bench.c $$(pkg-config --cflags --libs libsecret-1 libgcrypt) \
		|| { rm -f .build/secret-bench; echo "secret-bench did not build: the libsecret rows will say so"; }
	SECRET_BENCH="$(CURDIR)/.build/secret-bench" \
		"$$($(SWIFT) build -c release $(SWIFT_FLAGS) --show-bin-path)/keysmith-bench" --write-docs docs/BENCHMARKS.md

## stress: the slow reliability runs (200 SIGKILLs, longer contention and fuzzing).
stress: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	KEYSMITH_STRESS=1 $(SWIFT) test --skip-build --disable-xctest $(SWIFT_FLAGS) --filter "CrashSafety|Contention|Fuzz|FullDisk|Durability"

clean:
	rm -rf .build
