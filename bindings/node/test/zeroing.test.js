// The addon zeroes its copies of what JavaScript hands it (a value to store): a small C
// library loaded into a separate Node process with LD_PRELOAD watches explicit_bzero, and
// reports each call made from keysmith.node on memory that held the test's marker value,
// and whether the marker was gone afterwards.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { freshPrefix } = require('./support');

const interposer = String.raw`
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void explicit_bzero(void *pointer, size_t length) {
    static void (*real)(void *, size_t);
    if (!real) real = (void (*)(void *, size_t))dlsym(RTLD_NEXT, "explicit_bzero");
    const char *marker = getenv("KEYSMITH_ZEROING_MARKER");
    Dl_info caller;
    if (marker != NULL && length >= strlen(marker) && memmem(pointer, length, marker, strlen(marker)) != NULL
        && dladdr(__builtin_return_address(0), &caller) != 0 && caller.dli_fname != NULL
        && strstr(caller.dli_fname, "keysmith.node") != NULL) {
        real(pointer, length);
        char line[128];
        int kept = memmem(pointer, length, marker, strlen(marker)) != NULL;
        int size = snprintf(line, sizeof line, "addon zeroed %zu bytes: marker %s\n", length, kept ? "kept" : "gone");
        ssize_t ignored = write(2, line, (size_t)size);
        (void)ignored;
        return;
    }
    real(pointer, length);
}
`;

test('the addon zeroes the copy of a value handed to it from JavaScript', () => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'keysmith-node-zeroing-'));
  try {
    const source = path.join(directory, 'watch-zeroing.c');
    const library = path.join(directory, 'watch-zeroing.so');
    fs.writeFileSync(source, interposer);
    const compiled = spawnSync('cc', ['-shared', '-fPIC', '-O1', '-o', library, source, '-ldl'], { encoding: 'utf8' });
    assert.equal(compiled.status, 0, `cannot build the watcher with cc (make deps installs gcc): ${compiled.stderr}`);

    const marker = `zeroing-marker-${crypto.randomBytes(12).toString('hex')}`;
    const script = `
      const { SecureStore } = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'index.js'))});
      (async () => {
        SecureStore.configure({ servicePrefix: ${JSON.stringify(freshPrefix('zeroing'))} });
        await SecureStore.set('token', process.env.KEYSMITH_ZEROING_MARKER, 'auth');
        const back = await SecureStore.get('token', 'auth');
        if (back !== process.env.KEYSMITH_ZEROING_MARKER) throw new Error('the value did not come back');
        await SecureStore.remove('token', 'auth');
        console.log('done');
      })().catch((error) => { console.error(error); process.exit(1); });
    `;
    const run = spawnSync(process.execPath, ['-e', script], {
      env: { ...process.env, LD_PRELOAD: library, KEYSMITH_ZEROING_MARKER: marker },
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), 'done');
    const reports = run.stderr.split('\n').filter((line) => line.startsWith('addon zeroed'));
    assert.ok(reports.length > 0, `the addon never zeroed memory that held the value: ${run.stderr}`);
    assert.deepEqual(reports.filter((line) => !line.endsWith('marker gone')), [], 'zeroed memory still holds the value');
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
});
