// npm run reliability:crash-loop -- [--minutes 10] [--seconds N] [--collectors 4] [--seed 1] [--built] [--keep] [--json]
// Runs the crash loop (crash-loop.ts) and prints its figures; exits 1 when an acknowledged
// point or model write was lost, duplicated or corrupted, or the service crashed by itself.
import { CRASH_LOOP_DEFAULTS, runCrashLoop, type CrashLoopReport } from './crash-loop.js';

const USAGE = `Usage: npm run reliability:crash-loop -- [options]
  --minutes N      how long to run [10]   (--seconds N for short runs)
  --collectors N   collector sessions sending at full speed, 6 streams each [4]
  --batch N        points per batch [1000]
  --seed N         seed of the kill schedule (SIGKILL every 3 to 15 s) [1]
  --built          run dist/main.js (after npm run build) instead of the sources through tsx
  --keep           keep the work directory (data, service log, collector buffers)
  --json           print one JSON object instead of the table
`;

function parse(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h' || a === '--help') { out.help = 'true'; continue; }
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const k = a.slice(2);
    if (['built', 'keep', 'json'].includes(k)) { out[k] = 'true'; continue; }
    if (argv[i + 1] === undefined) throw new Error(`${a} needs a value`);
    out[k] = argv[++i];
  }
  return out;
}

function positive(a: Record<string, string>, k: string, d: number): number {
  if (a[k] === undefined) return d;
  const n = Number(a[k]);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${k} must be a positive number, got ${a[k]}`);
  return n;
}

export function failures(r: CrashLoopReport): string[] {
  const out: string[] = [];
  if (r.lost > 0) out.push(`${r.lost} acknowledged points lost`);
  if (r.duplicated > 0) out.push(`${r.duplicated} points stored twice`);
  if (r.corrupt > 0) out.push(`${r.corrupt} stored points not as sent`);
  if (!r.checksumsMatch) out.push('checksums differ');
  if (r.readProbeFailures.length > 0) out.push(`${r.readProbeFailures.length} acknowledged points not readable after a restart`);
  if (r.modelMissing.length > 0) out.push(`${r.modelMissing.length} acknowledged model writes missing`);
  if (r.unexpectedExits > 0) out.push(`the service exited ${r.unexpectedExits} time(s) by itself`);
  if (r.seriesChanged > 0) out.push(`${r.seriesChanged} streams got a different series after a restart`);
  return out;
}

async function main(): Promise<void> {
  const a = parse(process.argv.slice(2));
  if (a.help) { process.stdout.write(USAGE); return; }
  const durationMs = a.seconds !== undefined ? positive(a, 'seconds', 60) * 1000 : positive(a, 'minutes', 10) * 60_000;
  const json = a.json === 'true';
  const r = await runCrashLoop({
    durationMs, collectors: positive(a, 'collectors', CRASH_LOOP_DEFAULTS.collectors), batchPoints: positive(a, 'batch', CRASH_LOOP_DEFAULTS.batchPoints),
    seed: positive(a, 'seed', 1), built: a.built === 'true', keep: a.keep === 'true',
    log: json ? () => undefined : (line) => process.stderr.write(`${line}\n`),
  });
  const bad = failures(r);
  if (json) {
    process.stdout.write(`${JSON.stringify({ ...r, perStream: r.perStream.map((s) => ({ ...s, examples: s.examples })), failures: bad })}\n`);
  } else {
    const rows: Array<[string, string | number]> = [
      ['run', `${r.seconds.toFixed(0)} s, ${r.collectors} collectors, ${r.streams} streams`],
      ['SIGKILLs (last one before the check)', r.kills],
      ['restart to ready (mean / max)', `${r.restartMs.mean} / ${r.restartMs.max} ms`],
      ['collector sessions', r.sessions],
      ['points sent (incl. replays not counted)', r.pointsSent],
      ['points acknowledged', r.pointsAcked],
      ['acknowledged per second', r.ackedPerSecond],
      ['acknowledged and lost', r.lost],
      ['stored twice', r.duplicated],
      ['stored not as sent', r.corrupt],
      ['stored but never acknowledged (allowed)', r.storedUnacked],
      ['checksums (collectors vs storage)', r.checksumsMatch ? 'equal' : 'DIFFER'],
      ['batches replayed from buffers', r.replayedBatches],
      ['largest forward buffer', `${r.maxBufferedBytes} B`],
      ['rejections by reason', JSON.stringify(r.rejected)],
      ['read probes after restarts (failed)', `${r.readProbes} (${r.readProbeFailures.length})`],
      ['model writes acknowledged (missing)', `${r.modelWritesAcked} (${r.modelMissing.length})`],
      ['service exits it did by itself', r.unexpectedExits],
    ];
    const w = Math.max(...rows.map(([k]) => k.length));
    process.stdout.write(`crash loop\n${rows.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`).join('\n')}\n`);
    for (const s of r.perStream) for (const e of s.examples) process.stdout.write(`  ${s.stream}: ${e}\n`);
    for (const f of [...r.readProbeFailures, ...r.modelMissing].slice(0, 20)) process.stdout.write(`  ${f}\n`);
    process.stdout.write(bad.length === 0 ? 'PASS: every acknowledged point and model write survived\n' : `FAIL: ${bad.join('; ')}\n`);
  }
  if (bad.length > 0) process.exitCode = 1;
}

main().catch((e: unknown) => {
  process.stderr.write(`crash loop: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
  process.exit(1);
});
