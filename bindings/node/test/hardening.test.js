// What the package must withstand: misused names, migrations between nested prefixes and use
// from worker threads, through the real addon and a real temporary keychain.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { SecureStore, SecureStoreError, SecureStoreErrorCode, KeysmithProvider, freshPrefix, swiftStore } = require('./support');

async function rejectsWith(promise, code) {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof SecureStoreError || typeof error.code === 'string', `an error with a code, got ${error}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected ${code}`);
}

test('a worker thread can use the store and exit without bringing the process down', () => {
  const script = `
    const { Worker } = require('node:worker_threads');
    const code = \`
      const { SecureStore } = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'index.js'))});
      SecureStore.configure({ servicePrefix: ${JSON.stringify(freshPrefix('worker'))} });
      SecureStore.set('k', 'v').then(() => SecureStore.get('k')).then((v) => require('node:worker_threads').parentPort.postMessage(v));
    \`;
    const worker = new Worker(code, { eval: true });
    worker.on('message', (v) => console.log('read ' + v));
    worker.on('exit', (code) => console.log('worker exited ' + code));
  `;
  const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: process.env });
  assert.equal(result.signal, null, `the process died of ${result.signal}: ${result.stderr}`);
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /read v\nworker exited 0/);
});

test('keys, namespaces and values with an unpaired surrogate are refused, so two names never share an item', async () => {
  SecureStore.configure({ servicePrefix: freshPrefix('surrogate') });
  await rejectsWith(SecureStore.set('token\uD800', 'secret'), SecureStoreErrorCode.INVALID_VALUE);
  await rejectsWith(SecureStore.set('token', 'secret', 'auth\uDC00'), SecureStoreErrorCode.INVALID_VALUE);
  // Their UTF-8 form would be U+FFFD: an item stored under that name stays out of reach of the half pair.
  await SecureStore.set('token\uFFFD', 'secret');
  await rejectsWith(SecureStore.get('token\uDBFF'), SecureStoreErrorCode.INVALID_VALUE);
  await rejectsWith(SecureStore.contains('token\uDBFF'), SecureStoreErrorCode.INVALID_VALUE);
  await rejectsWith(SecureStore.remove('token\uDBFF'), SecureStoreErrorCode.INVALID_VALUE);
  assert.equal(await SecureStore.get('token\uFFFD'), 'secret');
  // A half pair alone, or beside a real U+FFFD, is refused too.
  await rejectsWith(SecureStore.get('\uDC00'), SecureStoreErrorCode.INVALID_VALUE);
  await rejectsWith(SecureStore.set('token\uFFFD', 'a\uFFFD b\uD800'), SecureStoreErrorCode.INVALID_VALUE);
  assert.equal(await SecureStore.get('token\uFFFD'), 'secret', 'the refused set changed nothing');
  const provider = new KeysmithProvider();
  const error = await rejectsWith((async () => provider.setItem(SecureStore.service('x'), 'k', 's3cr3t \uD83D value'))(), 'INVALID_VALUE');
  assert.doesNotMatch(error.message, /s3cr3t/, 'never the value');
  assert.equal(await SecureStore.get('token\uD83D\uDE00'), null, 'a whole pair is a name like any other');
});

test('a namespace with an invisible format character is refused, as the Swift store refuses it', async () => {
  const prefix = freshPrefix('format');
  SecureStore.configure({ servicePrefix: prefix });
  for (const namespace of ['auth\u200B', '\uFEFFauth', 'au\u00ADth']) {
    await rejectsWith(SecureStore.set('k', 'v', namespace), SecureStoreErrorCode.INVALID_VALUE);
    assert.notEqual(swiftStore(['set', prefix, namespace, 'k'], 'v').status, 0, 'the Swift store refuses it too');
  }
});

test('migrateFrom a prefix nested under the new one moves its items', async () => {
  const newPrefix = freshPrefix('outer');
  const oldPrefix = `${newPrefix}.v1`;
  SecureStore.configure({ servicePrefix: oldPrefix });
  await SecureStore.set('token', 'old-token', 'auth');
  await SecureStore.set('theme', 'dark');
  SecureStore.configure({ servicePrefix: newPrefix });
  const report = await SecureStore.migrateFrom(oldPrefix);
  assert.deepEqual(Object.keys(report.namespaces).sort(), ['auth', 'default']);
  assert.deepEqual(report.namespaces.auth.migrated, ['token']);
  assert.equal(await SecureStore.get('token', 'auth'), 'old-token');
  assert.equal(await SecureStore.get('theme'), 'dark');
  SecureStore.configure({ servicePrefix: oldPrefix });
  assert.deepEqual(await SecureStore.getKeys('auth'), []);
});

test('migrateFrom reports a namespace named __proto__ like any other', async () => {
  const oldPrefix = freshPrefix('proto-old');
  SecureStore.configure({ servicePrefix: oldPrefix });
  await SecureStore.set('k', 'v', '__proto__');
  SecureStore.configure({ servicePrefix: freshPrefix('proto-new') });
  const report = await SecureStore.migrateFrom(oldPrefix);
  assert.deepEqual(Object.keys(report.namespaces), ['__proto__']);
  assert.deepEqual(Object.getOwnPropertyDescriptor(report.namespaces, '__proto__').value.migrated, ['k']);
  assert.equal(Object.getPrototypeOf(report.namespaces), Object.prototype);
  assert.equal(await SecureStore.get('k', '__proto__'), 'v');
});

test('the string "null" reads back as that string, not as a missing value', async () => {
  SecureStore.configure({ servicePrefix: freshPrefix('null-text') });
  await SecureStore.set('middle_name', 'null');
  assert.equal(await SecureStore.contains('middle_name'), true);
  assert.equal(await SecureStore.get('middle_name'), 'null', 'null means missing; nothing stores JSON null');
  assert.equal(await SecureStore.get('absent'), null);
  await SecureStore.set('list', [null]);
  assert.deepEqual(await SecureStore.get('list'), [null], 'JSON null inside a value is kept');
});

test('a stored string of digits that no number can hold reads back whole, not rounded', async () => {
  SecureStore.configure({ servicePrefix: freshPrefix('digits') });
  for (const text of ['12345678901234567890', '1e400', '4.10', ' 7']) {
    await SecureStore.set('account_number', text);
    assert.equal(await SecureStore.get('account_number'), text);
  }
  for (const number of [42, 0.1, -3.5e-7, 1e21, Number.MAX_SAFE_INTEGER]) {
    await SecureStore.set('count', number);
    assert.equal(await SecureStore.get('count'), number, 'numbers stored as numbers read back as numbers');
  }
});

test('migrateFrom says it is not complete when an old service has a namespace no store can use', async () => {
  const oldPrefix = freshPrefix('unusable-old');
  // Written below the store (an earlier version accepted the name): U+200B is a format character.
  await new KeysmithProvider().setItem(`${oldPrefix}.auth\u200B`, 'token', 'old-token');
  SecureStore.configure({ servicePrefix: oldPrefix });
  await SecureStore.set('theme', 'dark');
  SecureStore.configure({ servicePrefix: freshPrefix('unusable-new') });
  const report = await SecureStore.migrateFrom(oldPrefix);
  assert.deepEqual(Object.keys(report.namespaces), ['default']);
  assert.deepEqual(report.leftBehind, [`${oldPrefix}.auth\u200B`]);
  assert.equal(report.isComplete, false, 'a value was left in the old place');
  assert.equal(await new KeysmithProvider().getItem(`${oldPrefix}.auth\u200B`, 'token'), 'old-token');
});
