// The ingest writer's remembered day blocks (rollups.ts): an append takes the block it
// stored last only while the stored bytes are still those; after an aborted transaction,
// a block changed by another writer or the same series in another store, the append
// decodes what is stored, and the blocks end equal to appends that never remembered.
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { openSeriesEnv, type SeriesEnv } from '../../src/storage/series-env.js';
import { appendRollups } from '../../src/storage/rollups.js';
import { rollupKey, seriesKey } from '../../src/storage/keys.js';
import { DAY_BLOCK_CODE as BLOCK } from '../../src/storage/rollup-read.js';
import type { TimedPoints } from '../../src/storage/point-runs.js';

const SEC = 1_000_000_000n, DAY = 86_400n * SEC, T0 = 1_700_006_400n * SEC; // T0: a UTC day's start

function run(from: number, n: number): TimedPoints {
  const ts = new BigInt64Array(n), f64 = new Float64Array(n), quality = new Uint32Array(n);
  for (let i = 0; i < n; i++) { const k = from + i; ts[i] = T0 + BigInt(k) * 7n * SEC + BigInt(k % 3) * 1_000_000n; f64[i] = Math.sin(k / 30) * 50 + (k % 7) * 0.25; quality[i] = k % 41 === 0 ? 0 : 192; }
  return { type: 'float64', count: n, ts, f64, i64: null, u8: null, ord: null, str: null, quality };
}

async function env(t: Test): Promise<SeriesEnv> {
  const dir = await mkdtemp(join(tmpdir(), 'rollup-remembered-'));
  const e = openSeriesEnv(join(dir, 'series'));
  t.teardown(async () => { await e.close(); await rm(dir, { recursive: true, force: true }); });
  return e;
}

const append = (e: SeriesEnv, series: Buffer, from: number, n: number) => {
  const pts = run(from, n);
  const prev = from === 0 ? null : run(from - 1, 1).ts[0];
  e.root.transactionSync(() => appendRollups({ env: e, txn: undefined }, series, 'float64', prev, pts));
};
const blocks = (e: SeriesEnv, series: Buffer) => [...e.rollups.getRange({ start: rollupKey(series, BLOCK, T0 - DAY), end: rollupKey(series, BLOCK, T0 + 9n * DAY) })].map(({ key, value }) => [key.toString('hex'), value.toString('hex')]);

t.test('an aborted append, another writer and another store: the blocks equal appends made without remembering', async (t) => {
  const a = await env(t), b = await env(t), ref = await env(t);
  const id = randomUUID(), series = seriesKey(id);
  // the reference: each append in a store of its own series key first touched afresh
  const refSeries = seriesKey(randomUUID());
  const steps: Array<[number, number]> = [];
  for (let k = 0; k < 3000; k += 10) steps.push([k, 10]);
  for (const [from, n] of steps) append(ref, refSeries, from, n);
  let i = 0;
  for (const [from, n] of steps) {
    i++;
    if (i % 50 === 7) {
      // a transaction that appends and then aborts: the remembered bytes are then not stored
      t.throws(() => a.root.transactionSync(() => {
        appendRollups({ env: a, txn: undefined }, series, 'float64', run(from - 1, 1).ts[0], run(from, n));
        throw new Error('abort');
      }), /abort/);
    }
    if (i % 50 === 23) {
      // the same series in another store, ending at the same point with another history
      // (its first points left out): the block b remembers must not stand for a's
      b.root.transactionSync(() => appendRollups({ env: b, txn: undefined }, series, 'float64', null, run(1, from - 1)));
    }
    append(a, series, from, n);
  }
  const got = blocks(a, series).map(([, v]) => v), want = blocks(ref, refSeries).map(([, v]) => v);
  t.ok(want.length > 0, 'the reference holds day blocks');
  t.same(got, want, 'every day block is byte-identical to the reference');
});

t.test('a block rewritten by another writer between appends is read again', async (t) => {
  const a = await env(t), ref = await env(t);
  const series = seriesKey(randomUUID());
  append(a, series, 0, 100);
  append(ref, series, 0, 100);
  // another writer stores the block of a longer history (as a repair after late data would)
  const other = await env(t);
  append(other, series, 0, 100); append(other, series, 100, 50);
  const key = rollupKey(series, BLOCK, T0);
  const rewritten = other.rollups.get(key)!;
  a.root.transactionSync(() => a.rollups.putSync(key, rewritten));
  append(a, series, 150, 30);
  append(ref, series, 100, 50); append(ref, series, 150, 30);
  t.same(a.rollups.get(key)!.toString('hex'), ref.rollups.get(key)!.toString('hex'), 'the append folded into the stored block, not the remembered one');
});
