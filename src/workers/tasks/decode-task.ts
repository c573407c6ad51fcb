// Decode throughput of one worker (bench/storage.ts): decodes every sealed chunk of a
// series `repeat` times into columns allocated once, and reports points, wall seconds and
// this thread's CPU seconds. Not served over HTTP. Body: {points, seconds, cpu_seconds}
// On two cores shared by both workers and other processes, wall time counts the time the
// thread waited for a core; the thread's own CPU time (Linux /proc/thread-self, 10 ms
// ticks) is what the decoder cost. cpu_seconds is null where that file does not exist.
import { readFileSync } from 'node:fs';
import { allChunks } from '../../storage/series-store.js';
import { decodeChunk, MAX_CHUNK_POINTS } from '../../storage/series-store.js';
import { allocColumns } from '../../storage/series-store.js';
import { seriesKey } from '../../storage/series-store.js';
import { requireMeta } from '../../storage/series-store.js';
import { runTask } from '../worker-state.js';
import { JSON_TYPE, type DecodeTask, type TaskOutcome } from '../task-protocol.js';

/** Clock ticks per second of /proc stat times (sysconf(_SC_CLK_TCK) is 100 on Linux). */
const CLK_TCK = 100;

function threadCpuSeconds(): number | null {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // f[0] is field 3 (state)
    return (Number(f[11]) + Number(f[12])) / CLK_TCK; // fields 14 utime, 15 stime
  } catch {
    return null;
  }
}

export function decodeTask(t: DecodeTask): TaskOutcome {
  return runTask(JSON_TYPE, (view, sink) => {
    const meta = requireMeta(view, t.series);
    const series = seriesKey(t.series);
    // chunk bytes are gathered first so the timing covers decoding, not the LMDB walk
    const chunks: Uint8Array[] = [];
    for (const c of allChunks(view, series)) chunks.push(new Uint8Array(c.bytes));
    const cols = allocColumns(meta.type, MAX_CHUNK_POINTS);
    let points = 0;
    const cpu0 = threadCpuSeconds();
    const t0 = process.hrtime.bigint();
    for (let r = 0; r < t.repeat; r++) {
      for (const bytes of chunks) points += decodeChunk(bytes, cols);
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu1 = threadCpuSeconds();
    sink.ascii(JSON.stringify({ points, seconds, cpu_seconds: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0 }));
    return points;
  });
}
