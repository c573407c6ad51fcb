// Builds the portal (portal/src) into dist/portal with esbuild: one bundle of the page's
// TypeScript and CSS (uPlot included, nothing from a CDN), file names carrying a content
// hash so the service can let browsers keep them for a year, and an index.html that names
// them. index.html has no inline script or style: the service's Content-Security-Policy
// allows only files from its own origin. A build takes well under a second, so
// `npm run build`, `npm start` and `npm test` run it whenever they run.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const PORTAL_SOURCES = join(ROOT, 'portal');
export const PORTAL_OUT = join(ROOT, 'dist', 'portal');

/** Builds dist/portal; returns the hashed names of the script and the style sheet. */
export async function buildPortal({ minify = true } = {}) {
  const assets = join(PORTAL_OUT, 'assets');
  rmSync(PORTAL_OUT, { recursive: true, force: true });
  mkdirSync(assets, { recursive: true });
  const result = await build({
    entryPoints: [join(PORTAL_SOURCES, 'src', 'main.ts')],
    bundle: true, minify, sourcemap: 'linked', format: 'esm', target: ['es2022'],
    outdir: assets, entryNames: '[name]-[hash]', metafile: true, logLevel: 'warning',
    legalComments: 'linked',
  });
  let script = null, style = null;
  for (const out of Object.keys(result.metafile.outputs)) {
    if (out.endsWith('.js')) script = basename(out);
    else if (out.endsWith('.css')) style = basename(out);
  }
  if (!script || !style) throw new Error(`the portal build made no script or no style sheet: ${Object.keys(result.metafile.outputs).join(', ')}`);
  const html = readFileSync(join(PORTAL_SOURCES, 'index.html'), 'utf8')
    .replace('%SCRIPT%', `/assets/${script}`).replace('%STYLE%', `/assets/${style}`);
  writeFileSync(join(PORTAL_OUT, 'index.html'), html);
  return { script, style };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  const { script, style } = await buildPortal();
  process.stderr.write(`portal built in ${Date.now() - started} ms: ${script}, ${style}\n`);
}
