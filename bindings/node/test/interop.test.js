// Items written from JavaScript are the items the keysmith tool and the Swift SecureStore see,
// in both directions.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { SecureStore, freshPrefix, keysmith, swiftStore } = require('./support');

test('written from Node, read by keysmith find-generic-password -w', async () => {
  const prefix = freshPrefix('tool');
  SecureStore.configure({ servicePrefix: prefix });
  const token = 'tok-😀-"quoted"';
  await SecureStore.set('access_token', token, 'auth');
  const shown = keysmith(['find-generic-password', '-s', `${prefix}.auth`, '-a', 'access_token', '-w']);
  assert.equal(shown.status, 0, shown.stderr);
  assert.equal(shown.stdout, token + '\n');
});

test('added by keysmith add-generic-password, read from Node', async () => {
  const prefix = freshPrefix('tool2');
  SecureStore.configure({ servicePrefix: prefix });
  const added = keysmith(['add-generic-password', '-s', `${prefix}.auth`, '-a', 'refresh_token', '--stdin'], 'r-123');
  assert.equal(added.status, 0, added.stderr);
  assert.equal(await SecureStore.get('refresh_token', 'auth'), 'r-123');
  assert.deepEqual(await SecureStore.getKeys('auth'), ['refresh_token']);
  // And a delete from the tool is seen too.
  assert.equal(keysmith(['delete-generic-password', '-s', `${prefix}.auth`, '-a', 'refresh_token']).status, 0);
  assert.equal(await SecureStore.get('refresh_token', 'auth'), null);
});

test('written from Node, read by the Swift SecureStore', async () => {
  const prefix = freshPrefix('swift');
  SecureStore.configure({ servicePrefix: prefix });
  await SecureStore.set('access_token', 'from node ü', 'auth');
  await SecureStore.set('user_profile', { nickname: 'Ada', avatar: 'https://example.com/a.png' }, 'account_42');
  await SecureStore.set('plain', 'in default');

  let read = swiftStore(['get', prefix, 'auth', 'access_token']);
  assert.equal(read.status, 0, read.stderr);
  assert.equal(read.stdout, 'from node ü');
  read = swiftStore(['get-profile', prefix, 'account_42', 'user_profile']);
  assert.equal(read.status, 0, read.stderr);
  assert.equal(read.stdout, 'Ada https://example.com/a.png');
  read = swiftStore(['get', prefix, 'default', 'plain']);
  assert.equal(read.stdout, 'in default');
  read = swiftStore(['keys', prefix, 'auth']);
  assert.equal(read.stdout, 'access_token\n');
  assert.equal(swiftStore(['get', prefix, 'auth', 'missing']).status, 44);
});

test('written by the Swift SecureStore, read from Node', async () => {
  const prefix = freshPrefix('swift2');
  SecureStore.configure({ servicePrefix: prefix });
  let wrote = swiftStore(['set', prefix, 'auth', 'access_token'], 'from swift');
  assert.equal(wrote.status, 0, wrote.stderr);
  wrote = swiftStore(['set-profile', prefix, 'account_42', 'user_profile', 'Grace', 'https://example.com/g.png']);
  assert.equal(wrote.status, 0, wrote.stderr);
  assert.equal(await SecureStore.get('access_token', 'auth'), 'from swift');
  assert.deepEqual(await SecureStore.get('user_profile', 'account_42'), { nickname: 'Grace', avatar: 'https://example.com/g.png' });
  // Node replaces the Swift value in place: one item, seen by both.
  await SecureStore.set('access_token', 'replaced by node', 'auth');
  assert.equal(swiftStore(['get', prefix, 'auth', 'access_token']).stdout, 'replaced by node');
  await SecureStore.resetNamespace('auth');
  assert.equal(swiftStore(['get', prefix, 'auth', 'access_token']).status, 44);
});
