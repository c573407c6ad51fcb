// The Node flags `npm start` gives the service, for the benchmarks that spawn the service
// themselves, so they measure it as it runs (docs/decisions.md, "The service runs with two
// V8 helper threads" and "The service starts with --initial-old-space-size=128"). Read from
// package.json's start script, the one place they are written for a running service.
import { readFileSync } from 'node:fs';
// @ts-expect-error: a plain .mjs script without types
import { serviceEnv } from '../scripts/start.mjs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
const start = /\bnode((?: --[\w-]+(?:=\S+)?)*) dist\/main\.js/.exec(pkg.scripts.start);
if (start === null) throw new Error(`package.json's start script does not run "node [--flags] dist/main.js": ${pkg.scripts.start}`);

export const SERVICE_NODE_FLAGS: readonly string[] = start[1].trim().split(' ').filter((f) => f.length > 0);

// The environment `npm start` gives the service (scripts/start.mjs: glibc malloc settings), set on
// this process's, which the benchmarks pass to the service they spawn (glibc reads it at a
// process's start, so this process's own allocator is unchanged).
Object.assign(process.env, serviceEnv(process.env));
