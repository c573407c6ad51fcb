import t from 'tap';
import { join } from 'node:path';
import { Unpackr } from 'msgpackr';
// @ts-expect-error the shared dataset is plain JS without types
import { datasetSeries } from '../../../shared/datasets/industrial.mjs';
import { ReadPool } from '../../src/workers/read-pool.js';
import { decodeCursor } from '../../src/cursor.js';
import { readRaw, type RawPage } from '../../src/storage/series-store.js';
import { rawCursorListing } from '../../src/workers/tasks/raw-task.js';
import type { ValueType } from '../../src/storage/encoding/chunk-types.js';
import { tempStore, newId, WHO } from '../helpers/series-store.js';

interface DatasetSeries { name: string; type: ValueType; points(): Iterable<[bigint, unknown, number]> }
const ENUM_SET = 'machine-state';
const POINTS = 40_000; // several sealed chunks per series; 17 series reach the dataset's first text series
const big = (v: unknown) => (typeof v === 'bigint' ? v.toString() : v);

/** Exact point i of a page as comparable text: time and value as the engine holds them. */
function engineKey(p: RawPage, i: number): string {
  const v = p.f64 ? p.f64[i] : p.i64 ? p.i64[i] : p.u8 ? p.u8[i] === 1 : p.ord ? { enum_set: ENUM_SET, ordinal: p.ord[i] } : p.str![i];
  return JSON.stringify([p.ts[i].toString(), typeof v === 'number' && Object.is(v, -0) ? '-0' : big(v), p.quality[i]]);
}
const bodyKey = (ts: bigint, v: unknown, q: number) => JSON.stringify([ts.toString(), typeof v === 'number' && Object.is(v, -0) ? '-0' : big(v), q]);

t.test('raw reads from the pool return exactly the engine\'s points for every value type, in JSON and msgpack, across chunks and cursor pages', async (t) => {
  const { store, dir } = await tempStore(t);
  const list = (datasetSeries({ series: 17, points: POINTS }) as DatasetSeries[]);
  const ids: Array<{ id: string; type: ValueType }> = [];
  for (const s of list) {
    const id = newId();
    await store.createSeries({ id, type: s.type, writableClass: 'collector', ...(s.type === 'enum' ? { enumSet: { id: ENUM_SET, ordinals: [0, 1, 2, 3, 4, 5] } } : {}) });
    const times: bigint[] = [], quality: number[] = [], values: unknown[] = [];
    for (const [ts, v, q] of s.points()) { times.push(ts); quality.push(q); values.push(s.type === 'enum' ? (v as { ordinal: number }).ordinal : s.type === 'boolean' ? (v ? 1 : 0) : v); }
    const vals = s.type === 'float64' ? Float64Array.from(values as number[]) : s.type === 'int64' ? BigInt64Array.from((values as number[]).map((x) => BigInt(x)))
      : s.type === 'boolean' ? Uint8Array.from(values as number[]) : s.type === 'enum' ? Int32Array.from(values as number[]) : (values as string[]);
    await store.write([{ series: id, times: BigInt64Array.from(times), quality: Uint32Array.from(quality), values: vals }], WHO);
    ids.push({ id, type: s.type });
  }
  await store.sealHeads(0);
  t.ok(new Set(ids.map((x) => x.type)).size === 5, 'the dataset gives every value type');
  const pool = new ReadPool(join(dir, 'series'), 2);
  t.teardown(() => pool.close());
  const unpackr = new Unpackr({ int64AsType: 'bigint', useRecords: false, mapsAsObjects: true });
  const startNs = -(2n ** 63n), endNs = 2n ** 63n - 1n;

  for (const { id, type } of ids) {
    const want = store.read((v) => readRaw(v, id, { startNs, endNs, limit: 10_000_000 }));
    const expected = Array.from({ length: want.count }, (_, i) => engineKey(want, i));
    for (const format of ['json', 'msgpack'] as const) {
      const got: string[] = [];
      let afterNs: string | null = null;
      let pages = 0;
      do {
        const body = await pool.run('raw', { series: id, startNs: String(startNs), endNs: String(endNs), limit: 7777, afterNs, format });
        let cursor: string | null;
        if (format === 'json') {
          const text = Buffer.from(body.bytes).toString('utf8').replace(/"ts_ns":(-?\d+)/g, '"ts_ns":"$1"').replace(type === 'int64' ? /"value":(-?\d+)/g : /$^/, '"value":"$1"');
          const b = JSON.parse(text) as { points: Array<{ ts_ns: string; value: unknown; quality: number }>; next_cursor: string | null };
          for (const p of b.points) got.push(bodyKey(BigInt(p.ts_ns), type === 'int64' ? BigInt(p.value as string) : p.value, p.quality));
          cursor = b.next_cursor;
        } else {
          const b = unpackr.unpack(Buffer.from(body.bytes)) as { points: Array<{ ts_ns: bigint; value: unknown; quality: number }>; next_cursor: string | null };
          for (const p of b.points) got.push(bodyKey(BigInt(p.ts_ns), type === 'int64' ? BigInt(p.value as bigint) : p.value, p.quality));
          cursor = b.next_cursor;
        }
        body.release();
        afterNs = cursor === null ? null : decodeCursor(rawCursorListing(id), cursor, 1)[0];
        pages++;
      } while (afterNs !== null);
      t.equal(pages, Math.ceil(want.count / 7777) + (want.count % 7777 === 0 ? 1 : 0), `${type} ${format}: one page per 7777 points`);
      t.ok(got.length === expected.length && got.every((k, i) => k === expected[i]), `${type} ${format}: all ${expected.length} points exact and in order`);
    }
  }
});
