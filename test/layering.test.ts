// Imports run one way: http → domain folders → workers and ingest → storage →
// storage/encoding, with the pieces every layer needs at the bottom. This test is where
// the allowed directions are written down: every file of src belongs to one row of LAYERS
// and may import only from rows ranked below its own (or from its own row). A new folder
// fails the test until it gets a row. Outside src/storage, the engine is reached only
// through its public API (series-store.ts, plus the value types of chunk-types.ts).
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

/** [path under src (a folder ends with /), rank]. Higher ranks may import lower ones. */
const LAYERS: Array<[string, number]> = [
  // The bottom: shared by every layer, importing nothing of ours but each other in this order.
  ['errors.ts', 0], ['exact-ratio.ts', 0], ['clock.ts', 0], ['uuid.ts', 0], ['log.ts', 0],
  ['text-policy.ts', 1], ['body-sink.ts', 1], ['threads/', 1], ['config/', 1],
  ['json/', 2], ['cursor.ts', 2],
  // The storage engine: codecs below the engine.
  ['storage/encoding/', 10],
  ['storage/', 11],
  // The executable part of calculations (plans, grids, window evaluation) over the engine,
  // below the read pool whose workers run it; parse, check and compile stay in calc/.
  ['calc-kernel/', 15],
  // The read pool's tasks run over the engine.
  ['workers/', 20],
  // Domain folders. The model is the base of the domain; the others build on it.
  ['model/', 30],
  ['auth/', 31], ['operations/', 31],
  ['background-work/', 32], ['change-sets/', 32],
  ['service-context.ts', 33],
  ['series/', 34],
  // Resolved reads: the model and the data meet (resolution, the read routes' planning, live updates).
  ['reads/', 35],
  // Areas built on resolved reads: calculations read their inputs through resolution;
  // episodes evaluate their triggers and captures with the calculation engine; displays
  // resolve widgets over the model, episodes and annotations.
  ['calc/', 36], ['annotations/', 36],
  ['episodes/', 37],
  ['displays/', 38],
  // Front ends: the gRPC collector stream (it authenticates collectors and creates
  // series, so it sits above the domain) and REST.
  ['ingest/', 40],
  ['http/', 41],
  // Programs of their own and the composition root.
  ['collector/', 50],
  ['service.ts', 60], ['main.ts', 61],
];

/** Outside dependencies that only one folder may import (STYLE.md: one place each). */
const OWNERS: Array<[RegExp, string[]]> = [
  [/^uWebSockets\.js$/, ['http/']],
  [/^lmdb$/, ['storage/', 'collector/']],
  [/^@grpc\/grpc-js$/, ['ingest/']],
  [/^(pg|@electric-sql\/pglite.*)$/, ['model/']],
];

function layerOf(file: string): [string, number] | null {
  let best: [string, number] | null = null;
  for (const row of LAYERS) {
    const [prefix] = row;
    const hit = prefix.endsWith('/') ? file.startsWith(prefix) : file === prefix;
    if (hit && (best === null || prefix.length > best[0].length)) best = row;
  }
  return best;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (/\.(ts|mts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const IMPORT = /(?:^|[^.\w])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,]+\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(text: string): string[] {
  const specs: string[] = [];
  for (const m of text.matchAll(IMPORT)) specs.push(m[1] ?? m[2]);
  return specs;
}

t.test('every source file has a layer and imports only from layers below its own', async (t) => {
  const problems: string[] = [];
  for (const abs of sourceFiles(src)) {
    const file = relative(src, abs).split('\\').join('/');
    const own = layerOf(file);
    if (own === null) { problems.push(`${file}: no row in LAYERS (test/layering.test.ts)`); continue; }
    for (const spec of importsOf(readFileSync(abs, 'utf8'))) {
      if (!spec.startsWith('.')) {
        for (const [pattern, owners] of OWNERS) {
          if (pattern.test(spec) && !owners.some((o) => file.startsWith(o))) problems.push(`${file}: imports ${spec}, which only ${owners.join(', ')} may import`);
        }
        continue;
      }
      const target = relative(src, resolve(dirname(abs), spec)).split('\\').join('/').replace(/\.js$/, '.ts');
      const theirs = layerOf(target);
      if (theirs === null) { problems.push(`${file}: imports ${spec}, outside every layer`); continue; }
      if (theirs[0] !== own[0] && theirs[1] >= own[1]) problems.push(`${file} (${own[0]}) imports ${target} (${theirs[0]}), a layer not below it`);
      if (target.startsWith('storage/') && !file.startsWith('storage/') &&
          target !== 'storage/series-store.ts' && target !== 'storage/encoding/chunk-types.ts') {
        problems.push(`${file} imports ${target}: outside src/storage use the engine's public API (storage/series-store.ts)`);
      }
    }
  }
  t.same(problems, [], 'layering violations');
});

t.test('the check sees a violation when there is one', async (t) => {
  // The same rules applied to a made-up upward import, so the test above cannot pass vacuously.
  const own = layerOf('storage/write-apply.ts');
  const theirs = layerOf('http/server.ts');
  t.ok(own && theirs && theirs[1] >= own[1], 'storage importing http is refused');
  t.same(importsOf("import { x } from '../http/server.js';\nimport type { Y } from './y.js';\nconst z = await import('./z.js');"), ['../http/server.js', './y.js', './z.js']);
  t.equal(layerOf('reports/new-thing.ts'), null, 'a folder without a row has no layer');
});
