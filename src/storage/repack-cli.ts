// npm run storage:repack -- [--data-dir ./data] [--keep-old] [--json]
// Rewrites the series store of a stopped service in key order and swaps it in
// (src/storage/repack.ts): the file shrinks to the pages the data needs. --data-dir
// defaults to SERVICE_DATA_DIR (./data). Prints the file and live bytes before and after,
// and per table its pages; --json prints one JSON object instead. Exit codes: 0 done,
// 2 refused or bad arguments (nothing changed), 1 failed (the store is left as it was).
import { join, resolve } from 'node:path';
import type { DiskUsage } from './disk-usage.js';
import { repackInPlace, RepackRefused } from './repack.js';

const USAGE = 'usage: npm run storage:repack -- [--data-dir DIR] [--keep-old] [--json]';

function parse(argv: string[]): { dataDir: string; keepOld: boolean; json: boolean } {
  let dataDir = process.env.SERVICE_DATA_DIR || './data', keepOld = false, json = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--keep-old') keepOld = true;
    else if (a === '--json') json = true;
    else if (a === '--data-dir') {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new RepackRefused(`--data-dir needs a directory\n${USAGE}`);
      dataDir = v;
    } else throw new RepackRefused(`unknown argument ${a}\n${USAGE}`);
  }
  return { dataDir: resolve(dataDir), keepOld, json };
}

const mb = (b: number): string => (b / 2 ** 20).toFixed(2);

function table(before: DiskUsage, after: DiskUsage): string {
  const rows: string[][] = [['', 'before', 'after'], ['data.mdb (MiB)', mb(before.fileBytes), mb(after.fileBytes)], ['live pages (MiB)', mb(before.liveBytes), mb(after.liveBytes)]];
  for (const name of Object.keys(before.tablePages)) {
    const b = before.tablePages[name], a = after.tablePages[name];
    rows.push([`${name} (branch/leaf/overflow pages)`, `${b.branch}/${b.leaf}/${b.overflow}`, `${a.branch}/${a.leaf}/${a.overflow}`]);
  }
  const w = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => `${r[0].padEnd(w[0])}  ${r[1].padStart(w[1])}  ${r[2].padStart(w[2])}`).join('\n');
}

async function main(): Promise<number> {
  let opts;
  try {
    opts = parse(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    return 2;
  }
  try {
    const r = await repackInPlace(join(opts.dataDir, 'series'), { keepOld: opts.keepOld });
    if (opts.json) process.stdout.write(JSON.stringify({ data_dir: opts.dataDir, before: r.before, after: r.after, old_file: r.oldFile }) + '\n');
    else process.stdout.write(`${table(r.before, r.after)}\n${r.oldFile !== null ? `old file kept at ${r.oldFile}\n` : ''}`);
    return 0;
  } catch (e) {
    process.stderr.write(`storage:repack: ${(e as Error).message}\n`);
    return e instanceof RepackRefused ? 2 : 1;
  }
}

process.exitCode = await main();
