// The point runs that the golden-byte tests of every chunk format version pin (v2 to v5
// encode the same runs, so their files show what each version spends on one chunk), and
// the checks every version's goldens must pass: exact decode, and the group directory.
import type { Test } from 'tap';
import { decodeChunk, readChunkHeader, readInt64Extremes } from '../../src/storage/encoding/chunk.js';
import { ChunkGroups, ChunkSummary, readChunkSummary } from '../../src/storage/encoding/chunk-range.js';
import { createPointColumns } from '../../src/storage/encoding/point-columns.js';
import { HeaderView } from '../../src/storage/render-scan.js';
import type { PointColumns } from '../../src/storage/encoding/chunk-types.js';
import { type PointRun, timeAt, toColumns } from './chunk-arbitraries.js';

/** The runs' first time (2023-11-14T22:13:20Z). */
export const T0 = 1_700_000_000_000_000_000n;

/** 300 decimal points on a jittered 1 s grid, a deterministic wander: two directory groups. */
function directoryRun(): PointRun {
  const deltas: number[] = [], values: number[] = [], quality: number[] = [];
  let m = 20_000, seed = 7;
  for (let i = 0; i < 300; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    m += (seed % 41) - 20;
    values.push(m / 1000);
    quality.push(i >= 100 && i < 110 ? 0 : 192);
    if (i > 0) deltas.push(1_000_000_000 + ((seed >> 8) % 8) * 1_000_000);
  }
  return { type: 'float64', firstTs: T0, o0: 0, deltas, values, quality };
}

/** A deterministic linear congruential sequence in [0, 2^31), for runs that must look random. */
function lcg(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2147483648);
}

/**
 * 160 full-precision doubles around zero (a sine plus noise, like the dataset's vibration)
 * on a jittered 100 ms grid: float split with its exponents in RICE and signs, mantissas
 * and time residuals in one FRAME each (format version 4).
 */
function noiseRun(): PointRun {
  const next = lcg(11);
  const deltas: number[] = [], values: number[] = [], quality: number[] = [];
  let prevJitter = 0;
  for (let i = 0; i < 160; i++) {
    values.push(Math.sin(i * 0.7) * 3 + (next() / 2147483648 - 0.5) * 0.8);
    quality.push(192);
    const jitter = (next() >> 12) % 8;
    if (i > 0) deltas.push(100_000_000 + (jitter - prevJitter) * 1_000_000);
    prevJitter = jitter;
  }
  return { type: 'float64', firstTs: T0, o0: 0, deltas, values, quality };
}

/** A 400-point counter (steps 0..5) on a jittered 1 s grid: FRAME over its differences (format version 4). */
function counterRun(): PointRun {
  const next = lcg(5);
  const deltas: number[] = [], values: bigint[] = [], quality: number[] = [];
  let v = 1_000_000n, prevJitter = 0;
  for (let i = 0; i < 400; i++) {
    v += BigInt((next() >> 8) % 6);
    values.push(v);
    quality.push(192);
    const jitter = (next() >> 12) % 8;
    if (i > 0) deltas.push(1_000_000_000 + (jitter - prevJitter) * 1_000_000);
    prevJitter = jitter;
  }
  return { type: 'int64', firstTs: T0, o0: 0, deltas, values, quality };
}

/**
 * 600 points of a 0.01-resolution measurement wandering around a setpoint (the dataset's
 * analog at that resolution) on a jittered 1 s grid: its differences, crowded around 0,
 * in RICE_DELTA's zigzag form (format version 5); three directory groups.
 */
function fineWalkRun(): PointRun {
  const next = lcg(23);
  const u = () => next() / 2147483648;
  const deltas: number[] = [], values: number[] = [], quality: number[] = [];
  let level = 512, prevJitter = 0;
  for (let i = 0; i < 600; i++) {
    level += 0.02 * (500 - level) + 2 * (u() - 0.5);
    values.push(Math.round(level + 0.5 * (u() - 0.5)) / 100);
    quality.push(192);
    const jitter = (next() >> 12) % 8;
    if (i > 0) deltas.push(1_000_000_000 + (jitter - prevJitter) * 1_000_000);
    prevJitter = jitter;
  }
  return { type: 'float64', firstTs: T0, o0: 0, deltas, values, quality };
}

/** Runs pinned from format version 5 on, for the layout it added. */
export const V5_RUNS: Array<{ name: string; run: PointRun }> = [
  { name: 'fine walk', run: fineWalkRun() },
];

/** Runs pinned from format version 4 on, for the layouts it added. */
export const V4_RUNS: Array<{ name: string; run: PointRun }> = [
  { name: 'noise split', run: noiseRun() },
  { name: 'counter walk', run: counterRun() },
];

export const GOLDEN_RUNS: Array<{ name: string; run: PointRun }> = [
  { name: 'decimal', run: { type: 'float64', firstTs: T0, o0: 0, deltas: [1_003_000_000, 998_000_000, 1_001_000_000, 1_000_000_000], values: [20.5, 20.6, 20.6, 20.4, 20.7], quality: [192, 192, 192, 192, 192] } },
  { name: 'split', run: { type: 'float64', firstTs: T0, o0: 0, deltas: [1, 2], values: [0.1 + 0.2, -0, 5e-324], quality: [192, 64, 0] } },
  { name: 'int64', run: { type: 'int64', firstTs: -(2n ** 63n), o0: 0, deltas: [7, 7], values: [2n ** 63n - 1n, -(2n ** 63n), 0n], quality: [192, 192, 192] } },
  { name: 'boolean', run: { type: 'boolean', firstTs: T0, o0: 0, deltas: [1e9, 1e9, 1e9, 1e9, 1e9], values: [0, 0, 0, 1, 1, 0], quality: [192, 192, 192, 192, 0, 0] } },
  { name: 'enum', run: { type: 'enum', firstTs: 0n, o0: 0, deltas: [100, 100, 100], values: [3, 3, 5, -1], quality: [4294967295, 192, 192, 192] } },
  { name: 'string', run: { type: 'string', firstTs: T0, o0: 0, deltas: [10e9, 10e9, 10e9], values: ['B-1', 'B-1', 'é𝄞', ''], quality: [192, 192, 192, 192] } },
  { name: 'gapped time', run: { type: 'int64', firstTs: T0, o0: 0, deltas: [1_002_000_000, 999_000_000, 5_004_000_000, 1_000_000_000], values: [100n, 101n, 101n, 105n, 110n], quality: [192, 192, 0, 0, 192] } },
  { name: 'group directory', run: directoryRun() },
];

/** Version 2 bytes of every golden run, as the encoder wrote them until 2026-11-21. */
export const GOLDEN_HEX_V2: Record<string, string> = {
  'decimal': [
      '020000000500000000002a36fe9c971780acb324ff9c971780e218e9fe9c971780acb324ff9c97176666666666663440',
      '3333333333b3344000000000008034403333333333b33440050000000000000000000000920000007c00000089000000',
      '6c00000000010000add84d0200c0843de90700040001040105020101000100049a030102020301060100018003052fd1',
      '0c0b',
    ].join(''),
  'split': [
      '020000000300000000002a36fe9c971703002a36fe9c971701002a36fe9c971700002a36fe9c97170000000000000080',
      '343333333333d33f343333333333d33f0100000000000000010000000100000001000000ae00000075000000a0000000',
      '6c000000020000001a4afe2c0001020002000101020100030001020101010002fa0f01f90f020002e6cc1901e5cc1902',
      '0003e8cc99b30601e7cc99b3060102010003800301ff01017f010e6d95ab',
    ].join(''),
  'int64': [
      '020100000300000000000000000000800e00000000000080070000000000008000000000000000800000000000000080',
      'ffffffffffffff7fffffffffffffff7f0000000000000000030000000000000000000000920000007300000089000000',
      '6c000000000100007dac31000007010001000301feffffffffffffffff0102ffffffffffffffffff0100018003036857',
      'fdc6',
    ].join(''),
  'boolean': [
      '020200000600000000002a36fe9c971700f22f60ff9c971700002a36fe9c9717005efae8fe9c97170000000000000000',
      '000000000000f03f000000000000000000000000000000000400000000000000020000008f0000007b00000083000000',
      '700000008094ebdc0300000042b03648008094ebdc03010001000600030003020201010002800304ff0202248b4530',
    ].join(''),
  'enum': [
      '020400000400000000000000000000002c010000000000002c01000000000000c800000000000000000000000000f0bf',
      '00000000000014400000000000000840000000000000f0bf0400000000000000000000008d000000730000007b000000',
      '6c000000000100006b7fb86a006401000100040003060204010b010002feffffff1f01fdfcffff1f0336c7ae64',
    ].join(''),
  'string': [
      '020300000400000000002a36fe9c971700ac4d32059d971700002a36fe9c971700002a36fe9c9717000000000000f87f',
      '000000000000f87f000000000000f87f000000000000f87f04000000000000000000000095000000770000008c000000',
      '6c00000000010000d3dd77c20080c8afa02501000100040303422d3106c3a9f09d849e00000300020201020100018003',
      '041c56f4d3',
    ].join(''),
  'gapped time': [
      '020100000500000000002a36fe9c9717409b4c13009d971700002a36fe9c9717409b4c13009d97176400000000000000',
      '6e0000000000000064000000000000006e00000000000000030000000000000002000000a10000008600000092000000',
      '70000000808af7ae16010000dcf44b1602c0843de80700020003080200040001040101010802000004c8010102020801',
      '0a010003800302ff02028003010c7d3415',
    ].join(''),
  'group directory': [
      '020000002c01000000002a36fe9c971780be560c449d9717408867a8309d9717403d859dff9c971704560e2db2bd3340',
      '894160e5d0023440cff753e3a5fb3340986e1283c0ea334022010000000000000a0000000c0200000c010000fc010000',
      '8800000080b4e8ab25010803c0843da6d60f9eb802f2011cd80600c1010c400118000000e0fa106f00c0843deb070200',
      '0305030003000000df49920466a7d9f7496a804992a406000060dff77ddf4d92e427000000603625499224350d807dcf',
      '000000b0effbbeeffb3e4905b04f9224354d499224c9efb69da629c9e7fbbe4f902435c06edb194900eb25494d5392cf',
      'd2344d499224499224f9494d53f2939aa6694af2fb3e0000000000000003029eb8020627060006020e75724a092c6432',
      '19a5011a42f41562850ca50350c032158796a09df75cc3d995e3715e904828c8f210d1b841a1980901d3a003d13cd198',
      '1922e12401377924445209815040b88c1c04395b711c5167788f181a89d99c1786424bc494c563885ef48544906c4515',
      '7dd240799a2425e6a4589f811cdda8301db689daa0504e68656430890f7000e6f39ce3a661a70255dba67422f10060a6',
      '6de0c12140182853001426a668907671584066cf806217247ecd2825483752053a66e3b921c5758ac7b865a6f07ddbf2',
      '0d61c494878454dfd67047016a5284001b861cdf7452dd02000000000003800364ff020a8003be01c8e2d5a1',
    ].join(''),
};

/** Version 3 bytes of every golden run, as the encoder wrote them until 2026-11-21 (still read). */
export const GOLDEN_HEX_V3: Record<string, string> = {
  'decimal': [
      '3000002a36fe9c971709100d0505000016a21fba17a21f9a03010204000100007cbc60ca00c0843de907000400010401',
      '05020101000100049a030102020301060100018003052fd10c0b',
    ].join(''),
  'split': [
      '3000002a36fe9c97170f092b0a030101f00301000000000000000080343333333333d33f343333333333d33f01000000',
      '0000000002000000e81da94f0001020002000101020100030001020101010002fa0f01f90f020002e6cc1901e5cc1902',
      '0003e8cc99b30601e7cc99b3060102010003800301ff01017f010e6d95ab',
    ].join(''),
  'int64': [
      '3100000000000000800f071605030000f00e07000000000000000080ffffffffffffff7fffffffffffffff7f00000000',
      '000000000001000055945e240007010001000301feffffffffffffffff0102ffffffffffffffffff0100018003036857',
      'fdc6',
    ].join(''),
  'boolean': [
      '3200002a36fe9c9717090b080806000209050003000001008094ebdc03000000f72beffe008094ebdc03010001000600',
      '030003020201010002800304ff0202248b4530',
    ].join(''),
  'enum': [
      '3400000000000000000807080e040000020303020604020700010000f96b3473006401000100040003060204010b0100',
      '02feffffff1f01fdfcffff1f0336c7ae64',
    ].join(''),
  'string': [
      '3300002a36fe9c9717070b1505040000f91e000100000000df0949910080c8afa02501000100040303422d3106c3a9f0',
      '9d849e00000300020201020100018003041c56f4d3',
    ].join(''),
  'gapped time': [
      '3100002a36fe9c97170a160c0b05000206c53e00c53ec801000a14808af7ae1601000000c8353eb002c0843de8070002',
      '0003080200040001040101010802000004c80101020208010a010003800302ff02028003010c7d3415',
    ].join(''),
  'group directory': [
      '3000002a36fe9c9717128401f0010cac02000a36aaa712d99c0d8d2f9eb802f2011c830180b4e8ab25010803c0843da6',
      'd60f9eb802f2011cd80600c1010c400118000000760c442e00c0843deb0702000305030003000000df49920466a7d9f7',
      '496a804992a406000060dff77ddf4d92e427000000603625499224350d807dcf000000b0effbbeeffb3e4905b04f9224',
      '354d499224c9efb69da629c9e7fbbe4f902435c06edb194900eb25494d5392cfd2344d499224499224f9494d53f2939a',
      'a6694af2fb3e0000000000000003029eb8020627060006020e75724a092c643219a5011a42f41562850ca50350c03215',
      '8796a09df75cc3d995e3715e904828c8f210d1b841a1980901d3a003d13cd1981922e12401377924445209815040b88c',
      '1c04395b711c5167788f181a89d99c1786424bc494c563885ef48544906c45157dd240799a2425e6a4589f811cdda830',
      '1db689daa0504e68656430890f7000e6f39ce3a661a70255dba67422f10060a66de0c12140182853001426a668907671',
      '584066cf806217247ecd2825483752053a66e3b921c5758ac7b865a6f07ddbf20d61c494878454dfd67047016a528400',
      '1b861cdf7452dd02000000000003800364ff020a8003be01c8e2d5a1',
    ].join(''),
};

/** The header an encoder of format `version` must state for the points of `run`. */
export function expectedHeader(run: PointRun, version: number): Record<string, unknown> {
  const cols = toColumns(run);
  const n = cols.count;
  const num = (i: number): number => run.type === 'string' ? NaN : Number(run.values[i]);
  let lo = 0, hi = 0;
  for (let i = 1; i < n; i++) {
    if (run.type === 'string') break;
    if ((run.values[i] as number) < (run.values[lo] as number)) lo = i;
    if ((run.values[i] as number) > (run.values[hi] as number)) hi = i;
  }
  const good = cols.quality.subarray(0, n).filter((q) => q >= 192).length;
  const uncertain = cols.quality.subarray(0, n).filter((q) => q >= 64 && q < 192).length;
  return {
    formatVersion: version, type: run.type, count: n, firstTs: timeAt(cols, 0), lastTs: timeAt(cols, n - 1),
    min: num(lo), max: num(hi), minTs: timeAt(cols, lo), maxTs: timeAt(cols, hi), first: num(0), last: num(n - 1),
    goodCount: good, uncertainCount: uncertain, badCount: n - good - uncertain,
  };
}

/** Golden `bytes` of `run` in format `version`: the header states its points (int64: exact extremes) and the bytes decode to them. */
export function checkGoldenChunk(t: Test, bytes: Uint8Array, run: PointRun, version: number): void {
  const h = readChunkHeader(bytes);
  for (const [k, v] of Object.entries(expectedHeader(run, version))) t.ok(Object.is(h[k as keyof typeof h], v), `header ${k}: ${String(h[k as keyof typeof h])}`);
  t.equal(h.byteLength, bytes.length);
  if (run.type === 'int64') {
    const x = readInt64Extremes(bytes);
    const vals = run.values as bigint[];
    const sorted = [...vals].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    t.same([x.min, x.max, x.first, x.last], [sorted[0], sorted[sorted.length - 1], vals[0], vals[vals.length - 1]], 'exact int64 extremes');
  }
  checkDecodesExactly(t, bytes, toColumns(run));
}

/** `bytes` decode to exactly the points of `cols`: times, quality and every value bit. */
export function checkDecodesExactly(t: Test, bytes: Uint8Array, cols: PointColumns): void {
  const out = createPointColumns(cols.type, cols.count);
  t.equal(decodeChunk(bytes, out), cols.count);
  let same = true;
  for (let i = 0; i < cols.count; i++) if (timeAt(out, i) !== timeAt(cols, i) || out.quality[i] !== cols.quality[i]) same = false;
  t.ok(same, 'times and quality decode exactly');
  const col = { float64: 'f64', int64: 'i64', boolean: 'u8', enum: 'ord', string: 'str' }[cols.type] as 'f64' | 'i64' | 'u8' | 'ord' | 'str';
  const want = Array.from(cols[col] as ArrayLike<unknown>).slice(0, cols.count);
  const got = Array.from(out[col] as ArrayLike<unknown>).slice(0, cols.count);
  t.ok(want.every((v, i) => Object.is(v, got[i])), 'values decode exactly');
}

/** A golden's summary (by default the 'group directory' golden's) describes its groups exactly, and each group decodes alone. */
export function checkGroupDirectory(t: Test, bytes: Uint8Array, version: number, name = 'group directory'): void {
  const run = [...GOLDEN_RUNS, ...V5_RUNS].find((r) => r.name === name)!.run;
  const cols = toColumns(run);
  const s = new ChunkSummary();
  t.ok(readChunkSummary(bytes, cols.count, s), `a version ${version} chunk has a summary`);
  const groupCount = Math.ceil(cols.count / 256);
  t.equal(s.groups, groupCount);
  s.loadDirectory();
  let nonGood = 0;
  for (let i = 0; i + 1 < cols.count; i++) if (cols.quality[i] < 192) nonGood += cols.tsOffset[i + 1] - cols.tsOffset[i];
  t.equal(s.nonGoodNs, nonGood, 'non-good time is the time after each non-good point');
  t.equal(s.lastGood, true);
  const f = cols.f64!;
  for (let g = 0; g < groupCount; g++) {
    const a = g * 256, b = Math.min(cols.count, a + 256);
    let lo = a, hi = a;
    for (let i = a; i < b; i++) { if (f[i] < f[lo]) lo = i; if (f[i] > f[hi]) hi = i; }
    t.same([s.firstRel[g], s.firstV[g], s.minV[g], s.minIdx[g], s.maxV[g], s.maxIdx[g]], [cols.tsOffset[a] - cols.tsOffset[0], f[a], f[lo], lo, f[hi], hi], `group ${g}`);
    const ts = new Float64Array(256), v = new Float64Array(256);
    const groups = new ChunkGroups();
    groups.open(bytes, s, cols.count, cols.type);
    groups.decode(a, b, ts, v);
    t.equal(groups.timeAt(lo), cols.tsOffset[lo] - cols.tsOffset[0], `group ${g}: time of its min alone`);
    let same = true;
    for (let i = a; i < b; i++) if (ts[i - a] !== cols.tsOffset[i] - cols.tsOffset[0] || !Object.is(v[i - a], f[i])) same = false;
    t.ok(same, `group ${g} decodes alone to its points`);
  }
}

/**
 * The same chunk written by two format versions: readChunkHeader (but for the version and the
 * length), render's HeaderView and the summary reader must state the same facts of both.
 */
export function checkSameHeaderFacts(t: Test, older: Uint8Array, newer: Uint8Array, olderVersion: number, name: string, base: bigint): void {
  const a = readChunkHeader(older), b = readChunkHeader(newer);
  t.same({ ...b, formatVersion: olderVersion, byteLength: a.byteLength }, a, `${name}: readChunkHeader`);
  const fields = (bytes: Uint8Array) => {
    const h = new HeaderView(Buffer.alloc(16), base);
    h.read(bytes);
    return [h.type, h.count, h.goodCount, h.firstRel, h.lastRel, h.minRel, h.maxRel, h.min, h.max, h.first, h.last];
  };
  t.same(fields(newer), fields(older), `${name}: HeaderView`);
  const summary = (bytes: Uint8Array, count: number) => {
    const s = new ChunkSummary();
    readChunkSummary(bytes, count, s);
    s.loadDirectory();
    return [s.nonGoodNs, s.lastGood, s.groups, [...s.minV.subarray(0, s.groups)]];
  };
  t.same(summary(newer, b.count), summary(older, a.count), `${name}: summary`);
}
