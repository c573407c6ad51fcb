import t from 'tap';
import { readRaw, readRollups } from '../../src/storage/series-store.js';
import { tempStore, newId, WHO, T0, SEC } from '../helpers/series-store.js';

const H = 3_600_000_000_000n;
const all = { startNs: T0 - 10n * H, endNs: T0 + 100n * H };

t.test('appended int64, boolean and enum points enter hourly rollups as their numeric view (int64 as the nearest double)', async (t) => {
  const { store } = await tempStore(t, { seal: { chunkPoints: 300 } });
  const big = 2n ** 62n + 12345n;
  const cases = [
    { type: 'int64' as const, values: (i: number) => BigInt64Array.of(...Array.from({ length: 500 }, (_, k) => (k % 2 ? big : -big) + BigInt(i * 500 + k))), num: (x: unknown) => Number(x as bigint) },
    { type: 'boolean' as const, values: (i: number) => Uint8Array.from({ length: 500 }, (_, k) => ((i * 500 + k) >> 5) & 1), num: (x: unknown) => (x as number) },
    { type: 'enum' as const, values: (i: number) => Int32Array.from({ length: 500 }, (_, k) => (i * 500 + k) % 3), num: (x: unknown) => (x as number) },
  ];
  for (const c of cases) {
    const id = newId();
    await store.createSeries({ id, type: c.type, writableClass: 'collector', ...(c.type === 'enum' ? { enumSet: { id: newId(), ordinals: [0, 1, 2] } } : {}) });
    for (let i = 0; i < 4; i++) {
      const times = BigInt64Array.from({ length: 500 }, (_, k) => T0 + BigInt(i * 500 + k) * 20n * SEC);
      await store.write([{ series: id, times, values: c.values(i), quality: new Uint32Array(500).fill(192) }], WHO);
    }
    const raw = store.read((v) => readRaw(v, id, { ...all, limit: 10_000 }));
    const col = (raw.i64 ?? raw.u8 ?? raw.ord)!;
    const byHour = new Map<bigint, number[]>();
    for (let i = 0; i < raw.count; i++) {
      const h = raw.ts[i] - (raw.ts[i] % H);
      const xs = byHour.get(h) ?? []; xs.push(c.num(col[i])); byHour.set(h, xs);
    }
    const r = store.read((v) => readRollups(v, id, { interval: '1h', ...all, continuity: 'stepped' }));
    t.equal(r.count, byHour.size, `${c.type}: one bucket per hour with points`);
    let ok = true;
    [...byHour.values()].forEach((xs, i) => {
      if (r.points[i] !== xs.length || r.min[i] !== Math.min(...xs) || r.max[i] !== Math.max(...xs) || r.first[i] !== xs[0] || r.last[i] !== xs[xs.length - 1]) ok = false;
    });
    t.ok(ok, `${c.type}: count, min, max, first and last per bucket equal the raw points`);
  }
});
