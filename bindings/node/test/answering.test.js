// A get is answered on the JavaScript thread when the keychain can answer it without waiting
// (keysmith_get_nowait), and on the thread pool otherwise (the first call in a process, which
// opens the keychain, and every failure): both paths give the same answers, errors included.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { KeysmithProvider, freshPrefix, keysmith } = require('./support');

const packageDir = path.join(__dirname, '..');

/** The answer of a get as plain data: the value, or the error's code and status. */
async function answer(promise) {
  try {
    return { value: await promise };
  } catch (error) {
    return { code: error.code, status: error.status, message: error.message };
  }
}

/**
 * In a new process (where the keychain is not open yet, so the first get goes to the thread
 * pool), the answers to get(service, key): the first one, then the same get again (the
 * keychain now open).
 */
function coldThenWarm(service, key) {
  const script = `
    const { KeysmithProvider } = require(${JSON.stringify(path.join(packageDir, 'lib', 'index.js'))});
    async function answer(promise) {
      try { return { value: await promise }; }
      catch (error) { return { code: error.code, status: error.status, message: error.message }; }
    }
    (async () => {
      const provider = new KeysmithProvider();
      const cold = await answer(provider.getItem(${JSON.stringify(service)}, ${JSON.stringify(key)}));
      const warm = await answer(provider.getItem(${JSON.stringify(service)}, ${JSON.stringify(key)}));
      process.stdout.write(JSON.stringify({ cold, warm }));
    })();`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout);
}

/** Whether `promise` is settled before the event loop turns once (answered on this thread). */
async function settledBeforeTheLoopTurns(promise) {
  let turned = false;
  const immediate = new Promise((resolve) => setImmediate(() => { turned = true; resolve(); }));
  await promise.catch(() => {});
  const settledFirst = !turned;
  await immediate;
  return settledFirst;
}

test('a get answers the same through the thread pool and on the JavaScript thread', () => {
  const service = `${freshPrefix('answering')}.default`;
  const text = 'pässwörd ✓ with a U+0000 \u0000 inside';
  assert.equal(keysmith(['add-generic-password', '-s', service, '-a', 'text', '--stdin'], Buffer.from(text)).status, 0);
  assert.equal(keysmith(['add-generic-password', '-s', service, '-a', 'bin', '--stdin'], Buffer.from([0xff, 0xfe, 0x41])).status, 0);
  const expected = {
    text: { value: text },
    missing: { value: null },
    bin: { code: 'DECODING_FAILED', status: -26275 },
    '': { code: 'INVALID_VALUE', status: -50 },
  };
  for (const [key, want] of Object.entries(expected)) {
    const { cold, warm } = coldThenWarm(service, key);
    assert.deepEqual(cold, warm, `key '${key}'`);
    for (const [field, value] of Object.entries(want)) assert.deepEqual(cold[field], value, `key '${key}' ${field}`);
  }
});

test('with the keychain open, a get is answered without a trip to the thread pool', async () => {
  const service = `${freshPrefix('answering')}.default`;
  const provider = new KeysmithProvider();
  await provider.setItem(service, 'k', 'v');
  await provider.getItem(service, 'k');
  assert.equal(await settledBeforeTheLoopTurns(provider.getItem(service, 'k')), true);
  assert.equal(await provider.getItem(service, 'k'), 'v');
  assert.equal(await settledBeforeTheLoopTurns(provider.getItem(service, 'absent')), true);
  assert.equal(await provider.getItem(service, 'absent'), null);
  // A failure is answered on the thread pool, as before.
  const failed = await answer(provider.getItem(service, ''));
  assert.equal(failed.code, 'INVALID_VALUE');
  // A write is seen by the next get on this thread.
  await provider.setItem(service, 'k', 'w');
  assert.equal(await provider.getItem(service, 'k'), 'w');
});
