// Reads tap's output and prints the one line CI reads: "N passed, N failed".
import { readFileSync } from 'node:fs';
const text = readFileSync(process.argv[2], 'utf8');
const matches = [...text.matchAll(/^# \{ (.*) \}$/gm)];
if (matches.length === 0) { console.log('0 passed, 1 failed'); process.exit(0); }
const fields = Object.fromEntries(matches[matches.length - 1][1].split(',').map((kv) => kv.trim().split(':').map((s) => s.trim())));
const pass = Number(fields.pass ?? 0);
const fail = Number(fields.fail ?? 0);
const skip = Number(fields.skip ?? 0) + Number(fields.todo ?? 0);
console.log(`${pass} passed, ${fail} failed${skip ? `, ${skip} skipped` : ''}`);
