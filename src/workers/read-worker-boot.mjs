// Worker bootstrap used only when the service runs from TypeScript sources: under
// `node --import tsx`, a Piscina worker cannot load a .ts entry by itself
// (ERR_UNKNOWN_FILE_EXTENSION, STACK-NOTES §2/§13), so this plain module registers tsx
// when needed and re-exports the task functions. Compiled builds load read-worker.js.
import { workerData } from 'node:worker_threads';

const entry = new URL('./read-worker.ts', import.meta.url).href;
let tasks;
try {
  tasks = await import(entry); // already loadable under tap's TypeScript loader
} catch (e) {
  if (e?.code !== 'ERR_UNKNOWN_FILE_EXTENSION' && !/Unknown file extension/.test(String(e?.message))) throw e;
  const { register } = await import('tsx/esm/api');
  register();
  tasks = await import(`${entry}?tsx`); // a fresh URL: the failed load above stays cached
}
void workerData;
export const raw = tasks.raw;
export const render = tasks.render;
export const rollups = tasks.rollups;
export const gaps = tasks.gaps;
export const audit = tasks.audit;
export const decode = tasks.decode;
export const readSnapshot = tasks.readSnapshot;
export const readRaw = tasks.readRaw;
export const readAt = tasks.readAt;
export const readOverlay = tasks.readOverlay;
export const readAsOf = tasks.readAsOf;
export const readAudit = tasks.readAudit;
export const readSummary = tasks.readSummary;
export const readRender = tasks.readRender;
export const calcWindows = tasks.calcWindows;
