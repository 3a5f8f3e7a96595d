// One round of the Node row of keysmith-bench: SecureStore.get from Node (the package in
// bindings/node, its addon and libkeysmith.so), awaited one after another, on the keychain
// named by KEYSMITH_HOME that keysmith-bench filled.
//
//   node get-bench.js PACKAGE_DIR SERVICE_PREFIX NAMESPACE ITEM_COUNT LOOKUPS SEED
//
// Prints the mean nanoseconds per get of the timed lookups (after a warm-up) on stdout.
'use strict';
const path = require('node:path');

const [packageDir, servicePrefix, namespace, itemCountText, lookupsText, seedText] = process.argv.slice(2);
const { SecureStore } = require(path.resolve(packageDir, 'lib', 'index.js'));
const itemCount = Number(itemCountText);
const lookups = Number(lookupsText);

// The same small deterministic sequence of keys in every round with the same seed.
let state = Number(seedText) >>> 0;
function nextIndex() {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  return state % itemCount;
}

async function main() {
  SecureStore.configure({ servicePrefix });
  const keys = Array.from({ length: lookups }, () => `account-${nextIndex()}`);
  for (let i = 0; i < 200; i++) {
    if ((await SecureStore.get(keys[i % keys.length], namespace)) === null) throw new Error('a benchmark item is missing');
  }
  const start = process.hrtime.bigint();
  for (const key of keys) {
    const value = await SecureStore.get(key, namespace);
    if (typeof value !== 'string') throw new Error('unexpected value');
  }
  const elapsed = process.hrtime.bigint() - start;
  process.stdout.write(`${Number(elapsed) / lookups}\n`);
}

main().catch((error) => {
  process.stderr.write(`get-bench: ${error && error.message}\n`);
  process.exit(1);
});
