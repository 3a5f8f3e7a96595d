// SecureStore's API and rules, through the real addon and a real temporary keychain.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  SecureStore,
  SecureStoreError,
  SecureStoreErrorCode,
  SecureStoreAccessible,
  KeysmithProvider,
  freshPrefix,
  keysmith,
} = require('./support');

/** Configures a fresh prefix and collects the logger's events. */
function fresh(name, options = {}) {
  const events = [];
  const servicePrefix = freshPrefix(name);
  SecureStore.configure({ servicePrefix, logger: (event) => events.push(event), ...options });
  return { servicePrefix, events };
}

/** Asserts that `promise` rejects with a SecureStoreError of `code`; returns the error. */
async function rejectsWith(promise, code) {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof SecureStoreError, `a SecureStoreError, got ${error}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected ${code}`);
}

/** The item as the keysmith tool sees it (its JSON attributes). */
function item(service, key) {
  const result = keysmith(['--json', 'find-generic-password', '-s', service, '-a', key]);
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout);
}

test('a string is stored raw and read back unchanged', async () => {
  const { servicePrefix } = fresh('raw');
  const token = 'eyJhbGciOiJIUzI1NiJ9.payload."quoted".sig ü';
  await SecureStore.set('access_token', token, 'auth');
  assert.equal(await SecureStore.get('access_token', 'auth'), token);
  assert.equal(await SecureStore.getString('access_token', 'auth'), token);
  // Not JSON-quoted in the keychain.
  const shown = keysmith(['find-generic-password', '-s', `${servicePrefix}.auth`, '-a', 'access_token', '-w']);
  assert.equal(shown.stdout, token + '\n');
});

test('other values are stored as JSON and read back as values', async () => {
  const { servicePrefix } = fresh('json');
  const profile = { nickname: 'Ada', avatar: 'https://example.com/a.png', tags: ['x', 1, true] };
  await SecureStore.set('user_profile', profile, 'account_42');
  assert.deepEqual(await SecureStore.get('user_profile', 'account_42'), profile);
  const shown = keysmith(['find-generic-password', '-s', `${servicePrefix}.account_42`, '-a', 'user_profile', '-w']);
  assert.deepEqual(JSON.parse(shown.stdout), profile);
  for (const value of [42, 0, false, true, [1, 2], { nested: { deep: null } }, 3.5]) {
    await SecureStore.set('v', value, 'misc');
    assert.deepEqual(await SecureStore.get('v', 'misc'), value);
  }
  // A string that is itself JSON text: get parses it (the store's rule), getString returns it exactly.
  await SecureStore.set('pin', '1234', 'misc');
  assert.equal(await SecureStore.get('pin', 'misc'), 1234);
  assert.equal(await SecureStore.getString('pin', 'misc'), '1234');
});

test('a missing value is null, logged as notFound, never as a failure', async () => {
  const { events } = fresh('missing');
  assert.equal(await SecureStore.get('nothing', 'auth'), null);
  assert.equal(await SecureStore.getString('nothing'), null);
  assert.equal(await SecureStore.contains('nothing', 'auth'), false);
  assert.deepEqual(
    events.map((e) => [e.operation, e.outcome]),
    [
      ['get', 'notFound'],
      ['getString', 'notFound'],
      ['contains', 'notFound'],
    ],
  );
  assert.ok(events.every((e) => e.code === undefined));
});

test('null and undefined are rejected with INVALID_VALUE, and the stored value stays', async () => {
  fresh('null');
  await SecureStore.set('token', 'kept', 'auth');
  const error = await rejectsWith(SecureStore.set('token', null, 'auth'), SecureStoreErrorCode.INVALID_VALUE);
  assert.match(error.message, /null/);
  assert.match(error.message, /SecureStore\.remove\('token', 'auth'\)/);
  assert.equal(error.key, 'token');
  assert.equal(error.namespace, 'auth');
  await rejectsWith(SecureStore.set('token', undefined, 'auth'), SecureStoreErrorCode.INVALID_VALUE);
  await rejectsWith(SecureStore.setBiometricProtected('token', null, 'auth'), SecureStoreErrorCode.INVALID_VALUE);
  assert.equal(await SecureStore.get('token', 'auth'), 'kept');
});

test('values without a JSON form are rejected with INVALID_VALUE', async () => {
  fresh('nojson');
  const cycle = {};
  cycle.self = cycle;
  for (const value of [() => 1, Symbol('s'), 10n, NaN, cycle]) {
    await rejectsWith(SecureStore.set('v', value), SecureStoreErrorCode.INVALID_VALUE);
  }
  assert.equal(await SecureStore.contains('v'), false);
  // Half a UTF-16 pair cannot be stored as UTF-8 without changing it.
  await rejectsWith(SecureStore.set('v', 'ab\ud800c'), SecureStoreErrorCode.INVALID_VALUE);
  await rejectsWith(SecureStore.set('v', '\udc00'), SecureStoreErrorCode.INVALID_VALUE);
  await SecureStore.set('v', 'pair \ud83d\ude00 ok');
  assert.equal(await SecureStore.get('v'), 'pair 😀 ok');
  // Inside JSON it is escaped, so it survives.
  await SecureStore.set('v', { s: 'x\ud800' });
  assert.deepEqual(await SecureStore.get('v'), { s: 'x\ud800' });
});

test('a Promise (a forgotten await), a Map, a Set or bytes are refused, not stored changed', async () => {
  fresh('lossy');
  const forgotten = await rejectsWith(SecureStore.set('access_token', Promise.resolve('tok'), 'auth'), SecureStoreErrorCode.INVALID_VALUE);
  assert.match(forgotten.message, /Promise/);
  assert.match(forgotten.message, /await/);
  const map = await rejectsWith(SecureStore.set('m', new Map([['a', 1]])), SecureStoreErrorCode.INVALID_VALUE);
  assert.match(map.message, /Map/);
  assert.match(map.message, /Object\.fromEntries/);
  await rejectsWith(SecureStore.set('s', { tags: new Set(['a']) }), SecureStoreErrorCode.INVALID_VALUE);
  const bytes = await rejectsWith(SecureStore.set('key', Buffer.from([1, 2, 3])), SecureStoreErrorCode.INVALID_VALUE);
  assert.match(bytes.message, /base64/);
  await rejectsWith(SecureStore.set('key', { raw: new Uint8Array([1]) }), SecureStoreErrorCode.INVALID_VALUE);
  await rejectsWith(SecureStore.setBiometricProtected('p', Promise.resolve('1234')), SecureStoreErrorCode.INVALID_VALUE);
  assert.deepEqual(await SecureStore.getKeys('auth'), []);
  assert.deepEqual(await SecureStore.getKeys(), []);
  // What JSON carries whole still works: a Date is its ISO text.
  await SecureStore.set('d', { at: new Date(0) });
  assert.deepEqual(await SecureStore.get('d'), { at: '1970-01-01T00:00:00.000Z' });
});

test('values over 2048 characters are rejected with LIMIT_EXCEEDED; 2048 is fine', async () => {
  fresh('limit');
  await SecureStore.set('big', 'a'.repeat(2048), 'cache');
  assert.equal((await SecureStore.get('big', 'cache')).length, 2048);
  const error = await rejectsWith(SecureStore.set('big', 'b'.repeat(2049), 'cache'), SecureStoreErrorCode.LIMIT_EXCEEDED);
  assert.match(error.message, /'big' is 2049 characters/);
  assert.match(error.message, /limit is 2048/);
  assert.ok(!error.message.includes('bbbb'), 'the message never contains the value');
  assert.equal((await SecureStore.get('big', 'cache'))[0], 'a', 'the previous value stays');
  // Objects count their JSON text.
  await rejectsWith(SecureStore.set('obj', { data: 'x'.repeat(2040) }, 'cache'), SecureStoreErrorCode.LIMIT_EXCEEDED);
  // Characters as Swift counts them: 2048 emoji are 2048 characters (4096 UTF-16 units).
  await SecureStore.set('emoji', '😀'.repeat(2048), 'cache');
  await rejectsWith(SecureStore.set('emoji', '😀'.repeat(2049), 'cache'), SecureStoreErrorCode.LIMIT_EXCEEDED);
  await rejectsWith(SecureStore.setBiometricProtected('big', 'c'.repeat(2049), 'cache'), SecureStoreErrorCode.LIMIT_EXCEEDED);
});

test('the size limit can be configured', async () => {
  fresh('sizelimit', { sizeLimit: 8 });
  await SecureStore.set('k', '12345678');
  await rejectsWith(SecureStore.set('k', '123456789'), SecureStoreErrorCode.LIMIT_EXCEEDED);
  assert.throws(() => SecureStore.configure({ servicePrefix: 'com.example.x', sizeLimit: 0 }), (e) => e.code === 'INVALID_VALUE');
});

test('contains, remove, and removing a missing value', async () => {
  fresh('remove');
  await SecureStore.set('a', 'x', 'auth');
  assert.equal(await SecureStore.contains('a', 'auth'), true);
  assert.equal(await SecureStore.contains('a', 'other'), false);
  await SecureStore.remove('a', 'auth');
  assert.equal(await SecureStore.contains('a', 'auth'), false);
  assert.equal(await SecureStore.get('a', 'auth'), null);
  await SecureStore.remove('a', 'auth');
});

test('namespaces are services PREFIX.NAMESPACE; no namespace is PREFIX.default', async () => {
  const { servicePrefix } = fresh('services');
  await SecureStore.set('k', 'in default');
  await SecureStore.set('k', 'in auth', 'auth');
  assert.equal(SecureStore.service(), `${servicePrefix}.default`);
  assert.equal(SecureStore.service('auth'), `${servicePrefix}.auth`);
  assert.equal(keysmith(['find-generic-password', '-s', `${servicePrefix}.default`, '-a', 'k', '-w']).stdout, 'in default\n');
  assert.equal(keysmith(['find-generic-password', '-s', `${servicePrefix}.auth`, '-a', 'k', '-w']).stdout, 'in auth\n');
  assert.equal(await SecureStore.get('k'), 'in default');
});

test('getKeys lists a namespace, sorted; resetNamespace clears only that namespace', async () => {
  const { servicePrefix } = fresh('reset');
  await SecureStore.set('refresh_token', 'r', 'auth');
  await SecureStore.set('access_token', 't', 'auth');
  await SecureStore.set('user_info', { id: 1 }, 'account_1');
  await SecureStore.set('kept', 'k');
  assert.deepEqual(await SecureStore.getKeys('auth'), ['access_token', 'refresh_token']);
  assert.deepEqual(await SecureStore.getKeys('empty'), []);
  // A neighbouring prefix that starts the same way is another store.
  const neighbour = `${servicePrefix}x`;
  SecureStore.configure({ servicePrefix: neighbour });
  await SecureStore.set('access_token', 'other store', 'auth');
  SecureStore.configure({ servicePrefix });

  await SecureStore.resetNamespace('auth');
  assert.deepEqual(await SecureStore.getKeys('auth'), []);
  assert.deepEqual(await SecureStore.getKeys('account_1'), ['user_info']);
  assert.deepEqual(await SecureStore.getKeys(), ['kept']);
  SecureStore.configure({ servicePrefix: neighbour });
  assert.equal(await SecureStore.get('access_token', 'auth'), 'other store');
  SecureStore.configure({ servicePrefix });
  await SecureStore.resetNamespace();
  assert.deepEqual(await SecureStore.getKeys(), []);
});

test('bad keys, namespaces and options get INVALID_VALUE with the cause', async () => {
  fresh('bad');
  await rejectsWith(SecureStore.set('', 'v'), SecureStoreErrorCode.INVALID_VALUE);
  await rejectsWith(SecureStore.get(''), SecureStoreErrorCode.INVALID_VALUE);
  await rejectsWith(SecureStore.set(42, 'v'), SecureStoreErrorCode.INVALID_VALUE);
  const error = await rejectsWith(SecureStore.set('k', 'v', 'bad\nname'), SecureStoreErrorCode.INVALID_VALUE);
  assert.match(error.message, /control characters/);
  await rejectsWith(SecureStore.getKeys(''), SecureStoreErrorCode.INVALID_VALUE);
  assert.throws(() => SecureStore.configure({ servicePrefix: '' }), (e) => e.code === 'INVALID_VALUE' && /reverse-DNS/.test(e.message));
  assert.throws(() => SecureStore.configure({ servicePrefix: 'com.example.' }), (e) => e.code === 'INVALID_VALUE');
  assert.throws(() => SecureStore.configure({ accessible: 'sometimes' }), (e) => e.code === 'INVALID_VALUE' && /WHEN_UNLOCKED/.test(e.message));
  assert.throws(
    () => SecureStore.configure({ accessible: 'AccessibleAlwaysThisDeviceOnly' }),
    (e) => e.code === 'INVALID_VALUE' && /deprecated/.test(e.message),
  );
});

test('a call from plain JavaScript without a key says the key is missing, not something about the value', async () => {
  fresh('nokey');
  for (const call of [
    () => SecureStore.set(),
    () => SecureStore.set(undefined, 'v', 'auth'),
    () => SecureStore.setBiometricProtected(undefined, 'v'),
    () => SecureStore.get(),
    () => SecureStore.getString(null),
    () => SecureStore.contains(),
    () => SecureStore.remove(),
  ]) {
    const error = await rejectsWith(call(), SecureStoreErrorCode.INVALID_VALUE);
    assert.match(error.message, /key must be a string/, error.message);
  }
  assert.throws(
    () => SecureStore.configure({ sizeLimit: '10' }),
    (e) => e.code === 'INVALID_VALUE' && /got "10" \(a string\)/.test(e.message),
  );
});

test('migrateFrom refuses namespaces that are not a list of names, and moves nothing', async () => {
  const oldPrefix = freshPrefix('nslist');
  SecureStore.configure({ servicePrefix: oldPrefix });
  await SecureStore.set('token', 't', 'auth');
  await SecureStore.set('other', 'o', 'th');
  fresh('nslist-new');
  // A string is not a list: 'auth'.includes('th') must not select the namespace 'th'.
  const error = await rejectsWith(SecureStore.migrateFrom(oldPrefix, { namespaces: 'auth' }), SecureStoreErrorCode.INVALID_VALUE);
  assert.match(error.message, /array of namespace names/);
  await rejectsWith(SecureStore.migrateFrom(oldPrefix, { namespaces: [42] }), SecureStoreErrorCode.INVALID_VALUE);
  assert.equal(await SecureStore.get('other', 'th'), null);
  assert.equal(keysmith(['find-generic-password', '-s', `${oldPrefix}.th`, '-a', 'other', '-w']).stdout, 'o\n');
});

test('the accessibility is applied to the items written', async () => {
  const servicePrefix = freshPrefix('accessible');
  SecureStore.configure({ servicePrefix });
  await SecureStore.set('refresh_token', 'r', 'auth');
  assert.equal(item(`${servicePrefix}.auth`, 'refresh_token').accessible, 'afterFirstUnlockThisDeviceOnly');
  SecureStore.configure({ servicePrefix, accessible: SecureStoreAccessible.WHEN_UNLOCKED_THIS_DEVICE_ONLY });
  await SecureStore.set('access_token', 't', 'auth');
  assert.equal(item(`${servicePrefix}.auth`, 'access_token').accessible, 'whenUnlockedThisDeviceOnly');
  // react-native-keychain's spelling works too, and a later set re-applies it.
  SecureStore.configure({ servicePrefix, accessible: 'AccessibleAfterFirstUnlock' });
  await SecureStore.set('access_token', 't2', 'auth');
  assert.equal(item(`${servicePrefix}.auth`, 'access_token').accessible, 'afterFirstUnlock');
});

test('items go to the shared access group by default; a foreign group is MISSING_ENTITLEMENT with the status', async () => {
  const servicePrefix = freshPrefix('group');
  SecureStore.configure({ servicePrefix });
  await SecureStore.set('k', 'v');
  assert.equal(item(`${servicePrefix}.default`, 'k').accessGroup, 'keysmith.shared');
  SecureStore.configure({ servicePrefix, accessGroup: 'keysmith.shared' });
  assert.equal(await SecureStore.get('k'), 'v');

  SecureStore.configure({ servicePrefix, accessGroup: 'com.example.not-ours' });
  const error = await rejectsWith(SecureStore.set('k', 'secret-value-123'), SecureStoreErrorCode.MISSING_ENTITLEMENT);
  assert.equal(error.status, -34018);
  assert.match(error.message, /com\.example\.not-ours/);
  assert.ok(!error.message.includes('secret-value-123'), 'the message never contains the value');
  SecureStore.configure({ servicePrefix });
  assert.equal(await SecureStore.get('k'), 'v');
});

test('a locked keychain is INTERACTION_NOT_ALLOWED, and the message says how to unlock it', () => {
  // A keychain of its own, with a passphrase, locked: the other tests keep theirs unlocked.
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'keysmith-locked-'));
  try {
    const env = { ...process.env, KEYSMITH_HOME: home };
    const run = (args, input) => spawnSync(process.env.KEYSMITH_EXECUTABLE, args, { env, input, encoding: 'utf8' });
    assert.equal(run(['create', '--stdin'], 'correct horse\ncorrect horse\n').status, 0);
    const node = (body) =>
      spawnSync(
        process.execPath,
        ['-e', `const { SecureStore } = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'index.js'))});
          SecureStore.configure({ servicePrefix: 'com.example.locked', accessible: 'whenUnlockedThisDeviceOnly' });
          (async () => { ${body} })().catch((e) => console.log(JSON.stringify({ code: e.code, status: e.status, message: e.message })));`],
        { env, encoding: 'utf8' },
      );
    assert.equal(node("await SecureStore.set('access_token', 'tok', 'auth');").stdout, '');
    const locked = run(['lock']);
    assert.equal(locked.status, 0, locked.stderr);
    const error = JSON.parse(node("await SecureStore.get('access_token', 'auth');").stdout);
    assert.equal(error.code, 'INTERACTION_NOT_ALLOWED');
    assert.equal(error.status, -25308);
    assert.match(error.message, /locked/);
    assert.match(error.message, /keysmith unlock/, error.message);
    assert.doesNotMatch(error.message, /tok\b/);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
});

test('setBiometricProtected checks the capability and falls back where there is no biometry', async () => {
  const { servicePrefix, events } = fresh('biometric');
  await SecureStore.set('pin', 'old', 'local_pin');
  const result = await SecureStore.setBiometricProtected('pin', '1234', 'local_pin');
  // This machine has no authenticator: the value is stored plainly, and the result says why.
  assert.equal(result.protected, false);
  assert.equal(typeof result.reason, 'string');
  assert.ok(result.reason.length > 0);
  assert.equal(await SecureStore.getString('pin', 'local_pin'), '1234');
  assert.deepEqual(events.at(-2), { operation: 'setBiometricProtected', namespace: 'local_pin', key: 'pin', outcome: 'fellBack' });
  // The fallback uses the store's accessibility, as the Swift store does.
  assert.equal(item(`${servicePrefix}.local_pin`, 'pin').accessible, 'afterFirstUnlockThisDeviceOnly');
  await SecureStore.setBiometricProtected('card', { last4: '4242' }, 'local_pin');
  assert.deepEqual(await SecureStore.get('card', 'local_pin'), { last4: '4242' });
});

test('migrateFrom moves every namespace of the old prefix and never deletes the only copy', async () => {
  const oldPrefix = freshPrefix('old');
  SecureStore.configure({ servicePrefix: oldPrefix });
  await SecureStore.set('access_token', 'tok', 'auth');
  await SecureStore.set('profile', { nickname: 'Ada' }, 'account_7');
  await SecureStore.set('conflicting', 'old value', 'auth');
  // Earlier JavaScript stores kept their default namespace in the prefix itself.
  const legacy = keysmith(['add-generic-password', '-s', oldPrefix, '-a', 'device_id', '--stdin'], 'dev-1');
  assert.equal(legacy.status, 0, legacy.stderr);

  const { servicePrefix: newPrefix, events } = fresh('new');
  await SecureStore.set('conflicting', 'new value', 'auth');
  const report = await SecureStore.migrateFrom(oldPrefix);
  assert.deepEqual(report.namespaces.auth, { migrated: ['access_token'], alreadyPresent: [], conflicts: ['conflicting'], skipped: {} });
  assert.deepEqual(report.namespaces.account_7.migrated, ['profile']);
  assert.deepEqual(report.namespaces.default.migrated, ['device_id']);
  assert.equal(report.isComplete, false);
  assert.ok(events.some((e) => e.operation === 'migrateFrom' && e.outcome === 'success'));

  assert.equal(await SecureStore.get('access_token', 'auth'), 'tok');
  assert.deepEqual(await SecureStore.get('profile', 'account_7'), { nickname: 'Ada' });
  assert.equal(await SecureStore.get('device_id'), 'dev-1');
  assert.equal(await SecureStore.get('conflicting', 'auth'), 'new value');
  // Old copies: moved ones are gone, the conflicting one is kept.
  assert.equal(keysmith(['find-generic-password', '-s', `${oldPrefix}.auth`, '-a', 'access_token']).status, 44);
  assert.equal(keysmith(['find-generic-password', '-s', `${oldPrefix}.auth`, '-a', 'conflicting', '-w']).stdout, 'old value\n');
  assert.equal(keysmith(['find-generic-password', '-s', oldPrefix, '-a', 'device_id']).status, 44);

  // Idempotent: a second run changes nothing.
  const again = await SecureStore.migrateFrom(oldPrefix);
  assert.deepEqual(Object.keys(again.namespaces), ['auth']);
  assert.deepEqual(again.namespaces.auth.conflicts, ['conflicting']);
  assert.deepEqual(again.namespaces.auth.migrated, []);
  assert.equal(newPrefix.startsWith(oldPrefix), false);
});

test('migrateFrom into a prefix nested under the old one leaves the new items alone', async () => {
  const oldPrefix = freshPrefix('nest');
  SecureStore.configure({ servicePrefix: oldPrefix });
  await SecureStore.set('k', 'v', 'auth');
  SecureStore.configure({ servicePrefix: `${oldPrefix}.v2` });
  const first = await SecureStore.migrateFrom(oldPrefix);
  assert.deepEqual(Object.keys(first.namespaces), ['auth']);
  const second = await SecureStore.migrateFrom(oldPrefix);
  assert.deepEqual(second.namespaces, {}, 'the new prefix’s own services are not migrated into themselves');
  assert.equal(await SecureStore.get('k', 'auth'), 'v');
  await rejectsWith(SecureStore.migrateFrom(`${oldPrefix}.v2`), SecureStoreErrorCode.INVALID_VALUE);
});

test('migrateFrom can be limited to named namespaces', async () => {
  const oldPrefix = freshPrefix('some');
  SecureStore.configure({ servicePrefix: oldPrefix });
  await SecureStore.set('token', 't', 'auth');
  await SecureStore.set('api_key', 'k', 'keys');
  fresh('some-new');
  const report = await SecureStore.migrateFrom(oldPrefix, { namespaces: ['auth'] });
  assert.deepEqual(Object.keys(report.namespaces), ['auth']);
  assert.equal(await SecureStore.get('token', 'auth'), 't');
  assert.equal(await SecureStore.get('api_key', 'keys'), null);
  assert.equal(keysmith(['find-generic-password', '-s', `${oldPrefix}.keys`, '-a', 'api_key', '-w']).stdout, 'k\n');
});

test('a migration whose write fails keeps the old copy', async () => {
  const oldPrefix = freshPrefix('failing');
  SecureStore.configure({ servicePrefix: oldPrefix });
  await SecureStore.set('only_copy', 'precious', 'auth');
  // A destination in a group this program may not use: every write there fails.
  SecureStore.configure({ servicePrefix: freshPrefix('unreachable'), accessGroup: 'com.example.not-ours' });
  const error = await rejectsWith(SecureStore.migrateFrom(oldPrefix), SecureStoreErrorCode.MISSING_ENTITLEMENT);
  assert.equal(error.status, -34018);
  assert.equal(keysmith(['find-generic-password', '-s', `${oldPrefix}.auth`, '-a', 'only_copy', '-w']).stdout, 'precious\n');
});

test('bytes that are not UTF-8 text are DECODING_FAILED, not mangled', async () => {
  const { servicePrefix } = fresh('bytes');
  const added = keysmith(['add-generic-password', '-s', `${servicePrefix}.default`, '-a', 'bin', '--stdin'], Buffer.from([0xff, 0xfe, 0x41]));
  assert.equal(added.status, 0, added.stderr);
  const error = await rejectsWith(SecureStore.get('bin'), SecureStoreErrorCode.DECODING_FAILED);
  assert.equal(error.status, -26275);
});

test('calls run off the JavaScript thread and many can be in flight at once', async () => {
  fresh('parallel');
  const keys = Array.from({ length: 40 }, (_, i) => `key_${i}`);
  const pending = Promise.all(keys.map((key) => SecureStore.set(key, { key }, 'bulk')));
  // The event loop keeps turning while the keychain works.
  let turned = false;
  setImmediate(() => {
    turned = true;
  });
  await pending;
  assert.equal(turned, true);
  const values = await Promise.all(keys.map((key) => SecureStore.get(key, 'bulk')));
  assert.deepEqual(values, keys.map((key) => ({ key })));
  assert.deepEqual(await SecureStore.getKeys('bulk'), [...keys].sort());
});

test('SecureStoreError.fromNative keeps the native status and maps it to a code', () => {
  const cases = [
    [{ code: '-128', message: 'User canceled the operation.' }, 'USER_CANCELED', -128],
    [{ code: '-25308', message: 'Interaction is not allowed.' }, 'INTERACTION_NOT_ALLOWED', -25308],
    [{ code: '-25300', message: 'not found' }, 'ITEM_NOT_FOUND', -25300],
    [{ code: '-34018', message: 'entitlement' }, 'MISSING_ENTITLEMENT', -34018],
    [{ code: '-25299', message: 'duplicate' }, 'UNKNOWN', -25299],
    [{ code: 'AUTH_FAILED', status: -25293, message: 'x' }, 'AUTH_FAILED', -25293],
    [new Error('The user name or passphrase you entered is not correct; authentication failed'), 'AUTH_FAILED', undefined],
    [new Error('User canceled'), 'USER_CANCELED', undefined],
    ['a string', 'UNKNOWN', undefined],
  ];
  for (const [native, code, status] of cases) {
    const error = SecureStoreError.fromNative(native, { key: 'k', namespace: 'n' });
    assert.equal(error.code, code, JSON.stringify(native));
    assert.equal(error.status, status);
    assert.equal(error.key, 'k');
    assert.ok(error instanceof Error && error.name === 'SecureStoreError');
  }
  assert.deepEqual(Object.keys(SecureStoreErrorCode).sort(), [
    'AUTH_FAILED', 'DECODING_FAILED', 'INTERACTION_NOT_ALLOWED', 'INVALID_VALUE', 'ITEM_NOT_FOUND',
    'LIMIT_EXCEEDED', 'MISSING_ENTITLEMENT', 'UNKNOWN', 'USER_CANCELED',
  ]);
});

test('a custom provider plugs in under the same API', async () => {
  // The default provider, wrapped to count calls: the provider layer is an open interface.
  const inner = new KeysmithProvider();
  const calls = [];
  const provider = new Proxy(inner, {
    get(target, property) {
      const value = target[property];
      if (typeof value !== 'function') return value;
      return (...args) => {
        calls.push(property);
        return value.apply(target, args);
      };
    },
  });
  SecureStore.configure({ servicePrefix: freshPrefix('custom'), provider });
  await SecureStore.set('k', 'v');
  assert.equal(await SecureStore.get('k'), 'v');
  assert.deepEqual(calls, ['setItem', 'getItem']);
  assert.equal(SecureStore.provider, provider);
});
