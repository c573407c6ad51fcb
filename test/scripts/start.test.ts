// scripts/start.mjs (npm start) in a scratch copy of a project: it builds only when a source
// or a build setting is newer than the last build (a deletion counts), runs the command
// after it with the same exit status, and answers --help without building.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '../..');

function project(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'historian-start-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'scripts'));
  cpSync(join(REPO, 'scripts/start.mjs'), join(dir, 'scripts/start.mjs'));
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  mkdirSync(join(dir, 'src/sub'), { recursive: true });
  writeFileSync(join(dir, 'src/main.ts'), "if (process.argv.includes('--help')) process.stdout.write('help from the sources\\n');\n");
  writeFileSync(join(dir, 'src/sub/a.ts'), 'export const a = 1;\n');
  // The "build" counts its runs in a file, so the test sees when it ran.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module', scripts: {
    build: "mkdir -p dist && node -e \"const f='builds';const fs=require('fs');fs.writeFileSync(f,String(Number(fs.existsSync(f)?fs.readFileSync(f,'utf8'):0)+1))\"",
  } }));
  const past = Date.now() / 1000 - 3600;
  for (const f of ['package.json', 'src/main.ts', 'src/sub/a.ts', 'src/sub', 'src']) utimesSync(join(dir, f), past, past);
  return dir;
}

function start(dir: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [join(dir, 'scripts/start.mjs'), 'node', '-e', 'process.stdout.write("ran " + process.argv.slice(1).join(" ")); process.exit(3)', ...args], { cwd: dir, encoding: 'utf8' });
  const builds = existsSync(join(dir, 'builds')) ? Number(readFileSync(join(dir, 'builds'), 'utf8')) : 0;
  return { status: r.status, stdout: r.stdout, builds };
}

t.test('builds on the first start and when a source changes, not otherwise', async (t) => {
  const dir = project(t);
  const first = start(dir, 'x');
  t.equal(first.builds, 1, 'no build yet: it builds');
  t.equal(first.stdout, 'ran x', 'then runs the command with its arguments');
  t.equal(first.status, 3, 'and exits with the command\'s status');
  t.equal(start(dir).builds, 1, 'nothing changed: no build');
  writeFileSync(join(dir, 'src/sub/a.ts'), 'export const a = 2;\n');
  t.equal(start(dir).builds, 2, 'a changed source: it builds');
  t.equal(start(dir).builds, 2);
  rmSync(join(dir, 'src/sub/a.ts'));
  t.equal(start(dir).builds, 3, 'a deleted source: it builds');
  const later = Date.now() / 1000 + 5;
  utimesSync(join(dir, 'package.json'), later, later);
  t.equal(start(dir).builds, 4, 'a changed build setting: it builds');
});

t.test('--help prints from the sources without building', async (t) => {
  const dir = project(t);
  const r = spawnSync(process.execPath, [join(dir, 'scripts/start.mjs'), 'node', 'dist/main.js', '--help'], { cwd: dir, encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stdout, 'help from the sources\n');
  t.notOk(existsSync(join(dir, 'builds')), 'no build ran');
});

t.test('the service runs with MALLOC_ARENA_MAX=2 and a 64 KB mmap threshold unless the user set them', async (t) => {
  const dir = project(t);
  const malloc = (env: NodeJS.ProcessEnv) => spawnSync(process.execPath, [join(dir, 'scripts/start.mjs'), 'node', '-e', 'process.stdout.write(process.env.MALLOC_ARENA_MAX + " " + process.env.MALLOC_MMAP_THRESHOLD_)'], { cwd: dir, encoding: 'utf8', env }).stdout;
  const without = { ...process.env };
  delete without.MALLOC_ARENA_MAX;
  delete without.MALLOC_MMAP_THRESHOLD_;
  t.equal(malloc(without), '2 65536');
  t.equal(malloc({ ...without, MALLOC_ARENA_MAX: '4' }), '4 65536', "the user's setting is kept");
});
