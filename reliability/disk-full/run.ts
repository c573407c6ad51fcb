// npm run reliability:disk-full -- [--size-mib 256] [--threshold-mib 32] [--tmpfs] [--json]
// Runs the disk-full harness (disk-full.ts) and prints what the service did; exits 1 when it
// crashed, lost an acknowledged point, stopped serving reads or did not resume by itself.
import { DISK_FULL_DEFAULTS, runDiskFull } from './disk-full.js';
import { diskFullFailures, diskFullGaps } from './verdict.js';

const USAGE = `Usage: npm run reliability:disk-full -- [options]   (needs root: it mounts a filesystem)
  --size-mib N        size of the data directory's own filesystem [256]
  --threshold-mib N   SERVICE_INGEST_MIN_FREE_BYTES for the run, in MiB [32]
  --hold-ms N         how long each full phase is held [5000]
  --tmpfs             a tmpfs instead of a loop-mounted ext4 image
  --json              one JSON object instead of the table
`;

function num(args: string[], flag: string, d: number): number {
  const i = args.indexOf(flag);
  if (i < 0) return d;
  const n = Number(args[i + 1]);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${flag} must be a positive number`);
  return n;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) { process.stdout.write(USAGE); return; }
  const json = args.includes('--json');
  const r = await runDiskFull({
    sizeMiB: num(args, '--size-mib', DISK_FULL_DEFAULTS.sizeMiB), thresholdMiB: num(args, '--threshold-mib', DISK_FULL_DEFAULTS.thresholdMiB),
    holdMs: num(args, '--hold-ms', DISK_FULL_DEFAULTS.holdMs), prefer: args.includes('--tmpfs') ? 'tmpfs' : 'ext4-loop',
    log: json ? () => undefined : (line) => process.stderr.write(`${line}\n`),
  });
  if (r.skipped !== null) {
    process.stdout.write(json ? `${JSON.stringify(r)}\n` : `SKIPPED: ${r.skipped}\n`);
    return;
  }
  const bad = diskFullFailures(r);
  if (json) { process.stdout.write(`${JSON.stringify({ ...r, failures: bad, gaps: diskFullGaps(r) })}\n`); if (bad.length) process.exitCode = 1; return; }
  const probe = (p: typeof r.belowThreshold) => `alive ${p.alive}, raw read ${p.rawRead}, model read ${p.modelRead}, model write ${p.modelWrite}${p.modelWriteCode ? ` ${p.modelWriteCode}` : ''}`;
  const rows: Array<[string, string | number]> = [
    ['filesystem', `${r.fs}, ${r.sizeMiB} MiB, ingest threshold ${r.thresholdMiB} MiB free`],
    ['first storage-full refusal after', r.msToFirstRefusal === null ? 'never' : `${r.msToFirstRefusal} ms`],
    ['storage-full refusals (retryable, buffered)', r.storageFullRefusals],
    ['below the threshold', probe(r.belowThreshold)],
    ['no space at all (ENOSPC)', probe(r.noSpaceAtAll)],
    ['space back: first new ack after', r.msToResume === null ? 'never' : `${r.msToResume} ms`],
    ['space back: buffers drained after', r.msToBuffersDrained === null ? 'never' : `${r.msToBuffersDrained} ms`],
    ['space back: model writes after', r.msToModelWrites === null ? 'never' : `${r.msToModelWrites} ms`],
    ['points acknowledged / lost / twice / corrupt', `${r.pointsAcked} / ${r.lost} / ${r.duplicated} / ${r.corrupt}`],
    ['checksums', r.checksumsMatch ? 'equal' : 'DIFFER'],
    ['model writes acknowledged (missing)', `${r.modelWritesAcked} (${r.modelMissing.length})`],
    ['service exits it did by itself', r.unexpectedExits],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(`disk full\n${rows.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`).join('\n')}\n`);
  for (const g of diskFullGaps(r)) process.stdout.write(`KNOWN GAP: ${g}\n`);
  if (r.serviceLogTail.length) process.stdout.write(`service warnings and errors (last ${r.serviceLogTail.length}):\n${r.serviceLogTail.map((l) => `  ${l}`).join('\n')}\n`);
  process.stdout.write(bad.length === 0 ? 'PASS\n' : `FAIL: ${bad.join('; ')}\n`);
  if (bad.length) process.exitCode = 1;
}

main().catch((e: unknown) => {
  process.stderr.write(`disk full: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
  process.exit(1);
});
