// Names are bytes: two namespaces, keys or services that differ only in Unicode form
// ("jos" + U+00E9 and "jose" + U+0301 look alike) are different names at every layer.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { SecureStore, KeysmithProvider, freshPrefix } = require('./support');

const PRECOMPOSED = 'jos\u00e9';
const DECOMPOSED = 'jose\u0301';

test('one namespace never reads another that differs only in Unicode form', async () => {
  SecureStore.configure({ servicePrefix: freshPrefix('twins') });
  const alice = `account_${DECOMPOSED}`;
  const bob = `account_${PRECOMPOSED}`;
  await SecureStore.set('token', 'ALICE-SECRET-TOKEN', alice);
  assert.equal(await SecureStore.get('token', alice), 'ALICE-SECRET-TOKEN');
  assert.equal(await SecureStore.get('token', bob), null, "bob never reads alice's token");
  await SecureStore.set('token', 'BOB-TOKEN', bob);
  assert.equal(await SecureStore.get('token', bob), 'BOB-TOKEN');
  assert.equal(await SecureStore.get('token', alice), 'ALICE-SECRET-TOKEN');
  await SecureStore.resetNamespace(bob);
  assert.equal(await SecureStore.get('token', bob), null);
  assert.equal(await SecureStore.get('token', alice), 'ALICE-SECRET-TOKEN', "bob's reset leaves alice's token");
});

test('getKeys lists both keys that differ only in Unicode form, each reading its own value', async () => {
  SecureStore.configure({ servicePrefix: freshPrefix('twinkeys') });
  await SecureStore.set(PRECOMPOSED, 'one');
  await SecureStore.set(DECOMPOSED, 'two');
  assert.deepEqual((await SecureStore.getKeys()).sort(), [PRECOMPOSED, DECOMPOSED].sort());
  assert.equal(await SecureStore.get(PRECOMPOSED), 'one');
  assert.equal(await SecureStore.get(DECOMPOSED), 'two');
});

test('migrateFrom moves both twin keys and both twin namespaces, and leaves nothing behind', async () => {
  const oldPrefix = freshPrefix('twinold');
  SecureStore.configure({ servicePrefix: oldPrefix });
  await SecureStore.set(PRECOMPOSED, 'one', 'auth');
  await SecureStore.set(DECOMPOSED, 'two', 'auth');
  await SecureStore.set('token', 'p', `account_${PRECOMPOSED}`);
  await SecureStore.set('token', 'd', `account_${DECOMPOSED}`);

  SecureStore.configure({ servicePrefix: freshPrefix('twinnew') });
  const report = await SecureStore.migrateFrom(oldPrefix);
  assert.equal(report.isComplete, true);
  assert.deepEqual(report.namespaces.auth.migrated.sort(), [PRECOMPOSED, DECOMPOSED].sort());
  assert.deepEqual(Object.keys(report.namespaces).sort(), ['auth', `account_${PRECOMPOSED}`, `account_${DECOMPOSED}`].sort());
  assert.equal(await SecureStore.get(PRECOMPOSED, 'auth'), 'one');
  assert.equal(await SecureStore.get(DECOMPOSED, 'auth'), 'two');
  assert.equal(await SecureStore.get('token', `account_${PRECOMPOSED}`), 'p');
  assert.equal(await SecureStore.get('token', `account_${DECOMPOSED}`), 'd');
  const old = new KeysmithProvider();
  assert.deepEqual(await old.getServices(oldPrefix), [], 'nothing left under the old prefix');
});

test('getServices matches the prefix byte for byte', async () => {
  const prefix = freshPrefix('twinservices');
  const provider = new KeysmithProvider();
  await provider.setItem(`${prefix}.${DECOMPOSED}`, 'k', 'v');
  await provider.setItem(`${prefix}.\u0301mark`, 'k', 'v');
  // A namespace that starts with a combining mark still starts with the prefix's bytes.
  assert.deepEqual((await provider.getServices(`${prefix}.`)).sort(), [`${prefix}.${DECOMPOSED}`, `${prefix}.\u0301mark`].sort());
  // The other spelling is another prefix.
  assert.deepEqual(await provider.getServices(`${prefix}.${PRECOMPOSED}`), []);
});

test('a key stored in two access groups is listed once without a group, and once in each group', async () => {
  // The second group this process may use: the one derived from the program's name.
  const ownGroup = `local.${path.basename(process.argv0)}`;
  const servicePrefix = freshPrefix('groups');
  SecureStore.configure({ servicePrefix, accessGroup: 'keysmith.shared' });
  await SecureStore.set('k', 'shared');
  SecureStore.configure({ servicePrefix, accessGroup: ownGroup });
  await SecureStore.set('k', 'own');
  assert.deepEqual(await SecureStore.getKeys(), ['k']);
  SecureStore.configure({ servicePrefix });
  assert.deepEqual(await SecureStore.getKeys(), ['k'], 'each key once, whichever groups hold it');
  SecureStore.configure({ servicePrefix, accessGroup: 'keysmith.shared' });
  assert.deepEqual(await SecureStore.getKeys(), ['k']);
  assert.equal(await SecureStore.get('k'), 'shared');
});

test('the size limit bounds bytes too: one character of many code points is refused', async () => {
  SecureStore.configure({ servicePrefix: freshPrefix('bytes') });
  const oneCharacter = 'e' + '\u0301'.repeat(100000);
  await assert.rejects(SecureStore.set('k', oneCharacter), (error) => {
    assert.equal(error.code, 'LIMIT_EXCEEDED');
    assert.match(error.message, /bytes/);
    return true;
  });
  assert.equal(await SecureStore.get('k'), null);
  // 2048 characters of any script fit: 4-byte characters included.
  await SecureStore.set('k', '\u{1F600}'.repeat(2048));
  await SecureStore.set('k', '\u4E2D'.repeat(2048));
});
