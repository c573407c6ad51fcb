// Reads V8 .cpuprofile files (node --cpu-prof writes one per thread) and splits each
// thread's self time by where the code lives: our ingest code, the storage engine (our
// src/storage plus lmdb-js), gRPC/protobuf, garbage collection, the rest of Node, idle.
// Time in Node's own functions (Buffer allocation, writev...) counts for the nearest caller
// that is ours or a package's, so "storage" includes the Buffers the engine allocates.
//   node --import tsx bench/cpu-split.ts <dir-or-file>...
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string }; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

export const CATEGORIES = ['ingest', 'storage', 'grpc', 'gc', 'node', 'other', 'idle'] as const;
export type Category = (typeof CATEGORIES)[number];

export interface ThreadSplit {
  file: string;
  /** Wall time the profile covers (ms). */
  spanMs: number;
  /** Self time per category (ms). */
  ms: Record<Category, number>;
  /** Heaviest self-time functions: [name (file), ms]. */
  top: Array<[string, number]>;
}

function categorise(url: string, fn: string): Category {
  if (fn === '(garbage collector)') return 'gc';
  if (fn === '(idle)') return 'idle';
  if (url.includes('/src/ingest/') || url.includes('/src/collector/')) return 'ingest';
  if (url.includes('/src/storage/') || url.includes('/node_modules/lmdb/') || url.includes('/node_modules/msgpackr/')) return 'storage';
  if (url.includes('@grpc/') || url.includes('protobufjs') || url.includes('@protobufjs/')) return 'grpc';
  if (url.startsWith('node:') || url === '' || fn === '(program)') return 'node';
  return 'other';
}

export function splitProfile(file: string, p: Profile): ThreadSplit {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) selfUs.set(p.samples[i], (selfUs.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, Category>();
  const categoryOf = (id: number): Category => {
    const known = memo.get(id);
    if (known) return known;
    const n = byId.get(id) as ProfileNode;
    let c = categorise(n.callFrame.url, n.callFrame.functionName);
    if (c === 'node' && n.callFrame.functionName !== '(program)') {
      const up = parent.get(id);
      if (up !== undefined) { const pc = categoryOf(up); if (pc !== 'idle' && pc !== 'gc') c = pc; }
    }
    memo.set(id, c);
    return c;
  };
  const ms = Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<Category, number>;
  const perFn = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const n = byId.get(id);
    if (!n) continue;
    const { functionName, url } = n.callFrame;
    ms[categoryOf(id)] += us / 1000;
    const key = `${functionName || '(anonymous)'} (${url.replace(/^.*\/(node_modules|src)\//, '$1/')})`;
    perFn.set(key, (perFn.get(key) ?? 0) + us / 1000);
  }
  const top = [...perFn].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, 15);
  return { file, spanMs: (p.endTime - p.startTime) / 1000, ms, top };
}

export async function splitProfiles(paths: string[]): Promise<ThreadSplit[]> {
  const files: string[] = [];
  for (const p of paths) {
    if ((await stat(p)).isDirectory()) files.push(...(await readdir(p)).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(p, f)));
    else files.push(p);
  }
  const out: ThreadSplit[] = [];
  for (const f of files) out.push(splitProfile(f, JSON.parse(await readFile(f, 'utf8')) as Profile));
  return out;
}

export function printSplit(splits: ThreadSplit[], write: (s: string) => void): void {
  for (const s of splits) {
    const busy = CATEGORIES.filter((c) => c !== 'idle').reduce((a, c) => a + s.ms[c], 0);
    if (busy < 50) continue;
    write(`${s.file}: ${Math.round(busy)} ms busy of ${Math.round(s.spanMs)} ms\n`);
    write(`  ${CATEGORIES.map((c) => `${c} ${Math.round(s.ms[c])} ms (${((100 * s.ms[c]) / Math.max(1, busy)).toFixed(0)}%)`).filter((_, i) => CATEGORIES[i] !== 'idle').join(', ')}\n`);
    for (const [name, ms] of s.top.slice(0, 12)) write(`    ${ms.toFixed(0).padStart(6)} ms  ${name}\n`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const paths = process.argv.slice(2);
  if (paths.length === 0) { process.stderr.write('usage: bench/cpu-split.ts <dir-or-.cpuprofile>...\n'); process.exit(2); }
  printSplit(await splitProfiles(paths), (s) => process.stdout.write(s));
}
