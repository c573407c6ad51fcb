// The progress recorder records at most once per interval (batches finishing meanwhile are
// merged into one recording), records what waits at once when settled, and readers of
// progress and lineage through the same database see every window queued before them.
import t from 'tap';
import { ProgressRecorder, progressOf, lineageOf, newCursor, type WindowDone } from '../../src/calc/engine/progress-store.js';
import type { Queryable } from '../../src/model/db.js';

/** A model database that logs statements (first word and the progress rows' asset ids) and answers empty. */
function fakeDb(log: string[]): Queryable {
  return {
    async query(text: string, params?: unknown[]) {
      const verb = text.trim().split(/\s+/)[0];
      const table = /calc_progress/.test(text) ? 'progress' : 'lineage';
      log.push(verb === "INSERT" && table === "progress" ? `progress ${String(params?.[1]).replace(/"/g, "")}` : `${verb} ${table}`);
      // a lineage INSERT returns one seq per span, in order
      const n = verb === 'INSERT' && table === 'lineage' ? String(params?.[0]).split(',').length : 0;
      return { rows: Array.from({ length: n }, (_, i) => ({ seq: BigInt(i + 1), ord: i + 1 })), rowCount: n } as never;
    },
    async exec() { /* unused */ },
  };
}

const cursors = new Map<string, ReturnType<typeof newCursor>>();
function done(asset: string, at: bigint): WindowDone {
  if (!cursors.has(asset)) cursors.set(asset, newCursor());
  return { ruleId: 'r', assetId: asset, ruleVersion: 1, outputSeries: `out-${asset}`, startNs: at, endNs: at + 1n, throughNs: at, evaluations: 1, errors: 0, lastError: null, cursor: cursors.get(asset) as ReturnType<typeof newCursor> };
}

const progressRows = (log: string[]) => log.filter((l) => l.startsWith('progress'));

t.test('one recording per interval: the first at once, the batches after it together when the interval ends', async (t) => {
  const log: string[] = [];
  const rec = new ProgressRecorder(fakeDb(log), (e) => { throw e; }, 200);
  rec.queue([done('a', 1n)]);
  await new Promise((r) => setTimeout(r, 20));
  t.same(progressRows(log), ['progress {a}'], 'the first list is recorded at once');
  rec.queue([done('a', 2n), done('b', 2n)]);
  rec.queue([done('a', 3n)]);
  await new Promise((r) => setTimeout(r, 60));
  t.equal(progressRows(log).length, 1, 'later lists wait for the interval');
  await new Promise((r) => setTimeout(r, 250));
  t.same(progressRows(log), ['progress {a}', 'progress {a,b}'], 'then one recording for both, merged per target');
  t.equal(rec.recordings, 2);
  t.equal(rec.rows, 3);
});

t.test('settled records what waits at once', async (t) => {
  const log: string[] = [];
  const rec = new ProgressRecorder(fakeDb(log), (e) => { throw e; }, 60_000);
  rec.queue([done('c', 1n)]);
  rec.queue([done('d', 2n)]); // before the first recording began: recorded with it
  const started = Date.now();
  await rec.settled();
  rec.queue([done('c', 3n)]);
  await rec.settled();
  t.ok(Date.now() - started < 5_000, 'no wait for the interval');
  t.same(progressRows(log), ['progress {c,d}', 'progress {c}']);
});

t.test('progress and lineage reads of the recorder\'s database come after what it had waiting', async (t) => {
  const log: string[] = [];
  const db = fakeDb(log);
  const rec = new ProgressRecorder(db, (e) => { throw e; }, 60_000);
  rec.queue([done('e', 1n)]); // recorded at once
  await new Promise((r) => setTimeout(r, 20));
  rec.queue([done('e', 2n)]); // waits for the interval
  await progressOf(db, 'r');
  const lastWrite = log.lastIndexOf('progress {e}');
  t.ok(lastWrite >= 0 && log.indexOf('SELECT progress') > lastWrite, 'progress read after the waiting recording');
  t.equal(progressRows(log).length, 2);
  rec.queue([done('f', 3n)]);
  await lineageOf(db, 'out-f', null, null);
  t.ok(log.lastIndexOf('SELECT lineage') > log.lastIndexOf('progress {f}') && log.includes('progress {f}'), 'lineage read after it too');
});
