// keysmith-empty: a Swift program that does nothing, built exactly as the keysmith tool is
// (same configuration and link flags), so `make bench` can tell the tool's own start-up and
// work from what any Swift program pays to start.
