// A full garbage collection of the calling thread, for the few moments when a quiet thread
// holds external memory V8 would otherwise keep: PGlite's initdb instances (pglite-thread.ts)
// and the columns of heads a quiet seal emptied (ingest-store.ts). `--expose-gc` is set for
// a new context only, so nothing else in the thread sees a global `gc`.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | null = null;

export function fullGc(): void {
  if (gc === null) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}
