// The simulator's own plant: deterministic from its seed, every value within its type's
// rules (enum ordinals are members of the registered set), history that stops at the
// time asked for, discrete signals reported by exception with a heartbeat.
import t from 'tap';
import { createHash } from 'node:crypto';
import { EQUIPMENT_STATE, PLANT_ENUM_SETS, plantSignals, plantStreams } from '../../src/collector/plant-signals.js';

const START = 1_790_000_000_000_000_000n;
const SECOND = 1_000_000_000n;

function drain(seed: number, series: number, seconds: number) {
  return plantStreams({ series, seed, startNs: START }).map((s) => {
    const b = s.next(100_000, START + BigInt(seconds) * SECOND);
    if (!b) return { name: s.name, type: s.type, times: [] as bigint[], values: [] as unknown[], quality: [] as number[] };
    return { name: s.name, type: s.type, enumSet: s.enumSet, times: Array.from(b.times), values: Array.from(b.values as ArrayLike<unknown>), quality: Array.from(b.quality ?? []) };
  });
}

/** A digest of every stream's points (tap's deep comparison of large arrays is slow). */
const digest = (streams: ReturnType<typeof drain>) =>
  createHash('sha256').update(JSON.stringify(streams, (_k, v: unknown) => typeof v === 'bigint' ? v.toString() : v)).digest('hex');

t.test('the same seed and start give the same points; another seed gives others', async (t) => {
  const a = digest(drain(1, 30, 900));
  t.equal(digest(drain(1, 30, 900)), a);
  t.not(digest(drain(2, 30, 900)), a);
});

t.test('signals come unit by unit with their types, and the enum streams name the registered set', async (t) => {
  const sig = plantSignals(24);
  t.equal(sig.length, 24);
  t.equal(sig[0].name, 'plant/area-1/pump-101/flow');
  t.equal(sig[0].unit, 'm3/h');
  t.same([...new Set(sig.map((s) => s.type))].sort(), ['boolean', 'enum', 'float64', 'int64', 'string']);
  t.ok(sig.some((s) => s.name.startsWith('plant/area-2/')), 'a second area after four units');
  t.same(new Set(sig.map((s) => s.name)).size, 24, 'names are unique');
  for (const s of sig.filter((x) => x.type === 'enum')) t.equal(s.enumSet, EQUIPMENT_STATE.name);
  t.same(PLANT_ENUM_SETS.map((s) => s.name), ['equipment-state']);
});

t.test('an hour of history: one sample a second for analog values and counters, by exception for the rest, never past the end', async (t) => {
  const streams = drain(1, 24, 3600);
  const ordinals = new Set<number>(EQUIPMENT_STATE.members.map((m) => m.ordinal));
  for (const s of streams) {
    t.ok(s.times.every((ts, i) => ts > START - 1n && ts <= START + 3600n * SECOND && (i === 0 || ts > s.times[i - 1])), `${s.name}: times rise inside the hour`);
    if (s.type === 'float64' || s.type === 'int64') t.ok(s.times.length >= 3599 && s.times.length <= 3601, `${s.name}: a sample a second (${s.times.length})`);
    else {
      t.ok(s.times.length >= 60 && s.times.length < 600, `${s.name}: on change and at least once a minute (${s.times.length})`);
      const gaps = s.times.slice(1).map((ts, i) => ts - s.times[i]);
      t.ok(gaps.every((g) => g <= 61n * SECOND), `${s.name}: no silence beyond the heartbeat`);
    }
    if (s.type === 'enum') t.ok(s.values.every((v) => ordinals.has(v as number)), `${s.name}: ordinals of ${EQUIPMENT_STATE.name}`);
    if (s.type === 'float64') t.ok(s.values.every((v) => Number.isFinite(v) && (v as number) >= 0), `${s.name}: finite, not negative`);
    t.ok(s.quality.every((q) => q === 192 || q === 0), `${s.name}: good or bad quality`);
  }
  const flow = streams[0].values as number[];
  t.ok(Math.max(...flow) - Math.min(...flow) > 1, 'the flow moves');
});

t.test('points bounds each stream; without it the stream goes on', async (t) => {
  const [bounded] = plantStreams({ series: 1, seed: 3, startNs: START, points: 10 });
  t.equal(bounded.next(100)?.times.length, 10);
  t.equal(bounded.next(100), null);
  const [open] = plantStreams({ series: 1, seed: 3, startNs: START });
  t.equal(open.next(5000)?.times.length, 5000);
  t.equal(open.next(5000)?.times.length, 5000);
});
