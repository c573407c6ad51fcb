// The disk-full harness's CI version (issue 31 item 2): the data directory (series storage and
// the embedded model) on a small filesystem of its own, ingest at full speed until the free
// space falls below the ingest threshold, then no space at all, then space given back. The
// long form with its table is `npm run reliability:disk-full`. Needs root to mount; without a
// mountable filesystem the test is skipped and says why.
import t from 'tap';
import { runDiskFull } from '../../reliability/disk-full/disk-full.js';
import { diskFullGaps } from '../../reliability/disk-full/verdict.js';

t.setTimeout(300_000);

t.test('a full disk refuses points retryably, keeps reads and the model, and resumes by itself with nothing acknowledged lost', { timeout: 300_000 }, async (t) => {
  const r = await runDiskFull({ sizeMiB: 192, thresholdMiB: 24, headroomMiB: 2, collectors: 2, holdMs: 2_000, log: (line) => t.comment(line) });
  if (r.skipped !== null) { t.pass('disk-full harness', { skip: r.skipped }); return; }
  t.equal(r.unexpectedExits, 0, 'the service never exited by itself');
  t.not(r.msToFirstRefusal, null, 'ingest crossed the threshold and was refused');
  t.ok((r.rejected['storage-full'] ?? 0) > 0, 'the collectors got storage-full rejections (retryable) and buffered the batches');
  for (const [phase, p] of [['below the threshold', r.belowThreshold], ['with no space at all', r.noSpaceAtAll]] as const) {
    t.ok(p.alive, `${phase}: the service answers`);
    t.equal(p.rawRead, 200, `${phase}: raw reads work`);
    t.equal(p.modelRead, 200, `${phase}: model reads work`);
  }
  t.equal(r.belowThreshold.modelWrite, 200, 'below the ingest threshold the model still takes writes');
  // With no space at all PGlite takes a write while its files still have room and refuses it
  // once it must extend one, with 503 storage-full (a retryable answer, not a 500).
  t.ok(r.noSpaceAtAll.modelWrite === 200 || r.noSpaceAtAll.modelWrite === 503, `with no space at all a model write is taken or refused with 503 (got ${r.noSpaceAtAll.modelWrite})`);
  for (const g of diskFullGaps(r)) t.comment(`known gap: ${g}`);
  t.not(r.msToResume, null, 'ingest resumed by itself once space returned');
  t.not(r.msToBuffersDrained, null, 'the collectors\' buffers drained');
  t.not(r.msToModelWrites, null, 'model writes resumed');
  t.ok(r.pointsAcked > 0, 'points were acknowledged');
  t.equal(r.lost, 0, 'no acknowledged point lost');
  t.equal(r.duplicated, 0, 'no point stored twice');
  t.equal(r.corrupt, 0, 'every stored point as sent');
  t.ok(r.checksumsMatch, 'checksums of the acknowledged points equal the stored ones');
  t.same(r.modelMissing, [], 'every acknowledged model write survived');
});
