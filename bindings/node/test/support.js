// Shared by the package's tests: the package as built by `make node`, a fresh service prefix
// per test (every test file shares one temporary keychain, KEYSMITH_HOME), and the keysmith
// tool and the Swift SecureStore (securestore-interop) as separate processes.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

if (!process.env.KEYSMITH_HOME) {
  throw new Error('Run these tests with KEYSMITH_HOME set to a temporary directory (make test-node does).');
}

const pkg = require(path.join(__dirname, '..', 'lib', 'index.js'));

let counter = 0;
/** A service prefix no other test uses. */
function freshPrefix(name) {
  counter += 1;
  return `com.example.node.${name}.${process.pid}.${counter}`;
}

function executable(variable) {
  const file = process.env[variable];
  if (!file) throw new Error(`${variable} is not set: run the tests with make test-node.`);
  return file;
}

/** Runs the keysmith tool; returns { status, stdout, stderr }. */
function keysmith(args, input) {
  const result = spawnSync(executable('KEYSMITH_EXECUTABLE'), args, { input, encoding: 'utf8' });
  if (result.error) throw result.error;
  return result;
}

/** Runs securestore-interop (the Swift SecureStore); returns { status, stdout, stderr }. */
function swiftStore(args, input) {
  const result = spawnSync(executable('SECURESTORE_INTEROP'), args, { input, encoding: 'utf8' });
  if (result.error) throw result.error;
  return result;
}

module.exports = { ...pkg, pkg, freshPrefix, keysmith, swiftStore };
