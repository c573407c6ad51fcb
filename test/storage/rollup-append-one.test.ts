// A point appended alone after the last point of its hour (a calculation output each
// second) updates the hour's row in place (appendOneInHour in rollups.ts). The blocks it
// stores equal, byte for byte, those of the same points appended as one run through the
// accumulator: cadences under and over an hour (hour and day crossings take the general
// path), bad qualities, repeated values, float64 and boolean series, and decimal values
// whose block scale changes (the last hour's row alone re-encoded, or the block whole).
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
const N = 900;

/** Point k: cadences of 1 s to 50 min with a 2 h gap now and then, odd nanoseconds, every 13th bad. */
function times(): BigInt64Array {
  const ts = new BigInt64Array(N);
  let at = T0 + 1_234_567n;
  for (let k = 0; k < N; k++) { ts[k] = at; at += k % 97 === 96 ? 7_200n * SEC : BigInt([1, 1, 2, 7, 60, 3_000][k % 6]) * SEC + BigInt(k % 5) * 1_000n; }
  return ts;
}

/** decimal: float64 values with 0, then 1, then 2 decimals (a block's scale grows as its hour fills). */
function points(kind: 'float64' | 'decimal' | 'boolean', from: number, n: number): TimedPoints {
  const type = kind === 'boolean' ? 'boolean' : 'float64';
  const all = times();
  const ts = all.slice(from, from + n), quality = new Uint32Array(n);
  const f64 = type === 'float64' ? new Float64Array(n) : null, u8 = type === 'boolean' ? new Uint8Array(n) : null;
  for (let i = 0; i < n; i++) {
    const k = from + i;
    quality[i] = k % 13 === 0 ? 0 : k % 17 === 0 ? 100 : 192;
    if (f64) f64[i] = kind === 'decimal' ? (k % 50 < 20 ? k : k % 50 < 35 ? k / 10 + 0.5 : k / 4) : k % 4 === 0 ? 2.5 : Math.sin(k / 9) * 40 + k / 8;
    if (u8) u8[i] = (k >> 2) & 1;
  }
  return { type, count: n, ts, f64, i64: null, u8, ord: null, str: null, quality };
}

async function env(t: Test): Promise<SeriesEnv> {
  const dir = await mkdtemp(join(tmpdir(), 'rollup-append-one-'));
  const e = openSeriesEnv(join(dir, 'series'));
  t.teardown(async () => { await e.close(); await rm(dir, { recursive: true, force: true }); });
  return e;
}

const blocks = (e: SeriesEnv, series: Buffer) => [...e.rollups.getRange({ start: rollupKey(series, BLOCK, T0 - DAY), end: rollupKey(series, BLOCK, T0 + 60n * DAY) })]
  .map(({ key, value }) => `${key.toString('hex')} ${value.toString('hex')}`);

for (const kind of ['float64', 'decimal', 'boolean'] as const) {
  const type = kind === 'boolean' ? 'boolean' : 'float64';
  t.test(`${kind}: points appended one at a time store the blocks of the same points appended as one run`, async (t) => {
    const one = await env(t), run = await env(t);
    const series = seriesKey(randomUUID());
    const ts = times();
    for (let k = 0; k < N; k++) one.root.transactionSync(() => appendRollups({ env: one, txn: undefined }, series, type, k === 0 ? null : ts[k - 1], points(kind, k, 1)));
    // the run in week-long pieces: appendRollups folds at most 8 days of points at once
    for (let k = 0; k < N;) {
      let e = k + 1;
      while (e < N && ts[e] - ts[k] < 7n * DAY) e++;
      const from = k;
      run.root.transactionSync(() => appendRollups({ env: run, txn: undefined }, series, type, from === 0 ? null : ts[from - 1], points(kind, from, e - from)));
      k = e;
    }
    const a = blocks(one, series), b = blocks(run, series);
    t.ok(a.length > 1, `${a.length} day blocks`);
    t.same(a, b);
  });
}
