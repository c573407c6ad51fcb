// The crash loop's CI version (issue 31 item 1): the real service as a child process, two
// collectors at full speed on both lanes, SIGKILL every 3 to 15 s for 60 s, then a last kill
// and the point-by-point check of the data directory against the collectors' acks. The long
// run is `npm run reliability:crash-loop -- --minutes 10`.
import t from 'tap';
import fc from 'fast-check';
import { RangeSet } from '../../reliability/crash-loop/ack-ledger.js';
import { runCrashLoop } from '../../reliability/crash-loop/crash-loop.js';

// Each restart costs a service start (PGlite, migrations, workers): ~5 s on a quiet box, far
// more on a loaded one, so this file gets more than the suite's 120 s.
t.setTimeout(300_000);

t.test('the ack record: a range set holds exactly the indexes added', (t) => {
  fc.assert(fc.property(fc.array(fc.tuple(fc.nat(300), fc.nat(40)), { maxLength: 60 }), (adds) => {
    const set = new RangeSet();
    const model = new Set<number>();
    for (const [start, len] of adds) {
      set.add(start, start + len);
      for (let k = start; k < start + len; k++) model.add(k);
    }
    if (set.size() !== model.size) return false;
    for (let k = 0; k < 345; k++) if (set.has(k) !== model.has(k)) return false;
    const ranges = set.ranges();
    // Disjoint, sorted and never adjacent (adjacent ranges merge).
    for (let i = 1; i < ranges.length; i++) if (ranges[i][0] <= ranges[i - 1][1]) return false;
    return true;
  }), { numRuns: 300 });
  t.end();
});

t.test('SIGKILL every 3 to 15 s under full-speed ingest loses, duplicates and corrupts nothing acknowledged', { timeout: 300_000 }, async (t) => {
  const r = await runCrashLoop({ durationMs: 60_000, collectors: 2, seed: 31, log: (line) => t.comment(line) });
  t.comment(`${r.kills} kills, ${r.pointsAcked} points acknowledged (${r.ackedPerSecond}/s), ${r.storedUnacked} stored without an ack, ${r.replayedBatches} batches replayed, ${r.modelWritesAcked} model writes`);
  t.ok(r.kills >= 2, 'the service was killed during the run and once more before the check');
  t.ok(r.pointsAcked > 0, 'points were acknowledged');
  t.equal(r.lost, 0, 'no acknowledged point lost');
  t.equal(r.duplicated, 0, 'no point stored twice');
  t.equal(r.corrupt, 0, 'every stored point has the value and quality it was sent with');
  t.ok(r.checksumsMatch, 'per-stream checksums of the acknowledged points equal the stored ones');
  t.same(r.readProbeFailures, [], 'the last acknowledged point of every stream reads back over REST after each restart');
  t.ok(r.modelWritesAcked > 0, 'model writes were acknowledged during the loop');
  t.same(r.modelMissing, [], 'every acknowledged model write is there after each crash');
  t.equal(r.unexpectedExits, 0, 'the service never exited by itself');
  t.equal(r.seriesChanged, 0, 'every stream found its series again after each restart');
  t.equal(r.refusedPoints, 0, 'no planned point was refused by the engine');
});
