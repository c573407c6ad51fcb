// The README against the code it describes, so it cannot drift again: its environment
// table lists exactly the variables `npm start -- --help` prints, with the same defaults;
// its layout table has a row for every folder of src; every `METHOD /v1/...` it names is
// an operation of the router.
import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { helpText } from '../src/config/config.js';
import { allRoutes } from '../src/http/routes/index.js';

const ROOT = resolve(import.meta.dirname, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The Markdown section under a `## ` heading, up to the next one. */
function section(heading: string): string {
  const start = README.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README has no section "${heading}"`);
  const end = README.indexOf('\n## ', start + 4);
  return README.slice(start, end < 0 ? undefined : end);
}

/** Table rows of a section: their cells, backticks kept. */
function rows(text: string): string[][] {
  return text.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('|---'))
    .map((l) => l.slice(1, -1).split(' | ').map((c) => c.trim()));
}

t.test('the environment table lists every variable of --help, one a row, with its default', async (t) => {
  const help = new Map<string, string>();
  for (const line of helpText().split('\n')) {
    const m = /^ {2}([A-Z][A-Z0-9_]+) +.*\[default: (.*)\]$/.exec(line);
    if (m) help.set(m[1], m[2].replace(/^\((.*)\)$/, '$1'));
  }
  t.ok(help.size > 20, `--help lists the variables (${help.size})`);
  const table = new Map<string, string>();
  for (const [name, dflt] of rows(section('Configuration')).slice(1)) {
    const m = /^`([A-Z][A-Z0-9_]+)`$/.exec(name);
    t.ok(m, `one variable a row: ${name}`);
    if (m) table.set(m[1], dflt.replace(/`/g, ''));
  }
  t.same([...table.keys()].sort(), [...help.keys()].sort(), 'the same variables');
  for (const [name, dflt] of help) if (table.has(name)) t.equal(table.get(name), dflt, `${name}: the same default`);
});

t.test('the layout table has a row for every folder of src', async (t) => {
  const named = new Set(rows(section('Layout')).slice(1).map(([f]) => f.replace(/`/g, '')));
  const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => `src/${d.name}`);
  for (const f of folders) t.ok(named.has(f), `${f} has a row`);
  for (const n of named) if (n.startsWith('src/') && n !== 'src/*.ts') t.ok(folders.includes(n), `${n} exists`);
});

t.test('every operation the README names is a route with that method', async (t) => {
  // A route's path as a pattern: a parameter matches one segment (a README placeholder or a value such as `units`).
  const routes = allRoutes().map((r) => ({ method: r.method.toUpperCase(), pattern: new RegExp(`^${r.path.replace(/\{[^}]+\}/g, '[^/]+')}$`) }));
  const known = (method: string, path: string) => routes.some((r) => r.method === method && r.pattern.test(path));
  const named = [...README.matchAll(/`((?:GET|POST|PUT|PATCH|DELETE)(?:\/(?:GET|POST|PUT|PATCH|DELETE))*) (\/v1\/[^`\s?]*)/g)];
  t.ok(named.length > 30, `the README names operations (${named.length})`);
  for (const [, methods, path] of named) {
    if (path.includes('*') || path.includes('...')) continue; // a family of operations (`POST /v1/read/*`)
    for (const method of methods.split('/')) t.ok(known(method, path), `${method} ${path} is an operation`);
  }
});
