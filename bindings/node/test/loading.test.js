// Loading the addon where it is incomplete: the error names what is missing and how to fix it.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const built = path.join(__dirname, '..', 'build', 'keysmith.node');
const index = path.join(__dirname, '..', 'lib', 'index.js');

/** The message of the error `SecureStore.configure()` throws with KEYSMITH_NODE_ADDON=addon. */
function loadError(addon, cwd = undefined) {
  const script =
    `const { SecureStore } = require(${JSON.stringify(index)});` +
    'try { SecureStore.configure(); console.log("loaded"); } catch (e) { console.log(e.code + " " + e.message); }';
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'keysmith-home-'));
  try {
    const result = spawnSync(process.execPath, ['-e', script], {
      encoding: 'utf8',
      cwd,
      env: { PATH: process.env.PATH, KEYSMITH_HOME: home, KEYSMITH_NODE_ADDON: addon },
    });
    assert.equal(result.status, 0, result.stderr);
    return result.stdout.trim();
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

test('an addon copied without the libraries beside it says to copy them, not to rebuild', () => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'keysmith-addon-'));
  try {
    const alone = path.join(directory, 'keysmith.node');
    fs.copyFileSync(built, alone);
    const message = loadError(alone);
    assert.match(message, /^UNKNOWN /);
    assert.match(message, /libkeysmith\.so/, 'names the missing library');
    assert.match(message, /same directory/, message);
    assert.ok(message.includes(directory), 'names the directory the libraries belong in');
    assert.doesNotMatch(message, /Require stack/, 'no module loader noise');
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
});

test('a missing addon says how to build it or where to point', () => {
  const message = loadError(path.join(os.tmpdir(), 'no-such-dir', 'keysmith.node'));
  assert.match(message, /make node/);
  assert.match(message, /KEYSMITH_NODE_ADDON/);
  assert.doesNotMatch(message, /Require stack/);
});

test('a missing system library names the package that provides it', () => {
  const { loadFailure } = require(path.join(__dirname, '..', 'lib', 'native.js'));
  const message = loadFailure('/app/build/keysmith.node', 'libsodium.so.23: cannot open shared object file: No such file or directory');
  assert.match(message, /apt-get install libsodium23/);
  assert.doesNotMatch(message, /make node/);
});

test('a relative KEYSMITH_NODE_ADDON is taken from the working directory', () => {
  const directory = path.join(__dirname, '..');
  assert.equal(loadError(path.join('build', 'keysmith.node'), directory), 'loaded');
  assert.equal(loadError(`.${path.sep}${path.join('build', 'keysmith.node')}`, directory), 'loaded');
});
