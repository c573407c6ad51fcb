// After a quiet seal has sealed points, the ingest worker's store runs a full collection once
// (ingest-store.ts, through SeriesStore onQuietSeal): the heads the seal emptied hold their columns as external
// memory until one, and a quiet thread starts none (issue 33). Writes alone do not collect.
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SeriesStore } from '../../src/storage/series-store.js';
import { EngineIngestStore } from '../../src/ingest/ingest-store.js';
import { f64Batch, newId, T0, SEC } from '../helpers/series-store.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secs = (from: number, n: number) => Array.from({ length: n }, (_, i) => T0 + BigInt(from + i) * SEC);
const vals = (from: number, n: number) => Array.from({ length: n }, (_, i) => Math.round(100 * Math.sin((from + i) / 50)) / 100);

t.test('one collection after each quiet seal that sealed points', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ingest-collect-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const ids = [newId(), newId()];
  const setup = SeriesStore.open(join(dir, 'series'));
  for (const id of ids) await setup.createSeries({ id, type: 'float64', writableClass: 'collector' });
  await setup.close();
  let collected = 0;
  const store = EngineIngestStore.open(join(dir, 'series'), 100, undefined, null, () => { collected++; });
  t.teardown(() => store.close());
  // a quiet seal follows at least 100,000 points (QUIET_SEAL_AFTER_POINTS)
  const load = async (from: number) => {
    for (let b = 0; b < 6; b++) await store.write(ids.map((id) => f64Batch(id, secs(from + b * 10_000, 10_000), vals(from + b * 10_000, 10_000))), 'test-principal');
  };
  const until = async (n: number) => { for (let waited = 0; collected < n && waited < 20_000; waited += 50) await sleep(50); };
  await load(0);
  await until(1);
  t.equal(collected, 1, 'collected after the first quiet seal');
  await load(60_000);
  await until(2);
  t.equal(collected, 2, 'and once more after the next');
  t.equal(store.lastPointNs(ids[0]), T0 + 119_999n * SEC, 'every point stored');
});
