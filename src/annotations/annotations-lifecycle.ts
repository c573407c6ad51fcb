// The lifecycle policy's `annotations {keep}` (src/storage/lifecycle-policy.ts), enforced.
// A policy belongs to a series; an annotation on an attribute is kept as long as the
// longest keep among the series bound to that attribute (an attribute bound to a series
// without a policy, or with keep 'forever', keeps its annotations). A target older than the
// cutoff (its end before now - keep) is taken off the annotation; an annotation left with
// no target is deleted with its versions, and attachments no annotation uses any more lose
// their bytes. Annotations on an asset or an episode have no series and no policy: kept.
// One model transaction per run; the run records an Operation.
import type { Db } from '../model/db.js';
import { sqlTextArray } from '../model/db.js';
import { modelTransaction } from '../model/tx-log.js';
import type { SeriesStore } from '../storage/series-store.js';

export const LIFECYCLE_PRINCIPAL = 'system';
const NS_PER_DAY = 86_400_000_000_000n;

/** ns an annotations `keep` ('forever' or '<n>d', validated with the policy) retains; null for forever. */
function annotationsKeepNs(keep: string): bigint | null {
  return keep === 'forever' ? null : BigInt(keep.slice(0, -1)) * NS_PER_DAY;
}

export interface AnnotationLifecycleReport {
  attributesWithCutoff: number;
  targetsRemoved: number;
  annotationsDeleted: number;
  /** SHA-256 of attachments whose bytes must be removed (after the commit). */
  unusedSha256: string[];
}

/** The cutoff per annotated attribute: null keeps forever. */
async function cutoffs(db: Db, store: SeriesStore, nowNs: bigint): Promise<Map<string, bigint>> {
  const { rows } = await db.query<{ attribute_id: string; series_id: string }>(
    `SELECT b.attribute_id, b.series_id FROM binding_version b
      WHERE b.tx_to IS NULL AND EXISTS (SELECT 1 FROM annotation_target t WHERE t.target_id = b.attribute_id)`);
  const longest = new Map<string, bigint | null>();
  for (const r of rows) {
    const policy = store.meta(r.series_id)?.lifecycle?.policy ?? null;
    const keep = policy ? annotationsKeepNs(policy.annotations.keep) : null;
    const before = longest.get(r.attribute_id);
    if (before === null) continue; // already forever
    longest.set(r.attribute_id, keep === null ? null : before === undefined || keep > before ? keep : before);
  }
  const out = new Map<string, bigint>();
  for (const [attribute, keep] of longest) if (keep !== null) out.set(attribute, nowNs - keep);
  return out;
}

export async function enforceAnnotationLifecycle(db: Db, store: SeriesStore, nowNs: bigint): Promise<AnnotationLifecycleReport> {
  const cut = await cutoffs(db, store, nowNs);
  const report: AnnotationLifecycleReport = { attributesWithCutoff: cut.size, targetsRemoved: 0, annotationsDeleted: 0, unusedSha256: [] };
  if (cut.size === 0) return report;
  const attributes = [...cut.keys()];
  await modelTransaction(db, { principal: LIFECYCLE_PRINCIPAL, reason: 'annotations lifecycle: annotations older than their series\' annotations keep' }, async (tx, txId, events) => {
    const { rows: removed } = await tx.query<{ annotation_id: string }>(
      `DELETE FROM annotation_target t USING unnest($1::uuid[], $2::bigint[]) AS c(attribute_id, cutoff)
        WHERE t.target_id = c.attribute_id AND t.end_ns < c.cutoff RETURNING t.annotation_id`,
      [sqlTextArray(attributes), sqlTextArray(attributes.map((a) => cut.get(a) as bigint))]);
    report.targetsRemoved = removed.length;
    const touched = [...new Set(removed.map((r) => r.annotation_id))];
    if (touched.length === 0) return;
    // what is left of each touched annotation's targets
    const { rows: left } = await tx.query<{ annotation_id: string; targets: string[] | null }>(
      `SELECT a.annotation_id, (SELECT jsonb_agg(t.target_id) FROM annotation_target t WHERE t.annotation_id = a.annotation_id) AS targets
         FROM annotation a WHERE a.annotation_id = ANY($1::uuid[])`, [sqlTextArray(touched)]);
    const gone = left.filter((r) => r.targets === null).map((r) => r.annotation_id);
    for (const r of left) {
      if (r.targets === null) continue;
      await tx.query('UPDATE annotation SET target_ids = $2::uuid[], tx_id = $3 WHERE annotation_id = $1', [r.annotation_id, sqlTextArray(r.targets), txId]);
      events.emit('annotation', r.annotation_id, 'trim-targets', { targets: r.targets });
    }
    if (gone.length > 0) {
      const { rows: used } = await tx.query<{ attachment_id: string }>(
        'DELETE FROM annotation_uses_attachment WHERE annotation_id = ANY($1::uuid[]) RETURNING attachment_id', [sqlTextArray(gone)]);
      await tx.query('DELETE FROM annotation WHERE annotation_id = ANY($1::uuid[])', [sqlTextArray(gone)]);
      for (const id of gone) events.emit('annotation', id, 'delete', { lifecycle: true });
      report.annotationsDeleted = gone.length;
      // attachments whose bytes no current annotation uses through any upload of them
      const { rows: unused } = await tx.query<{ sha256: string }>(
        `DELETE FROM annotation_attachment t WHERE t.attachment_id = ANY($1::uuid[])
            AND NOT EXISTS (SELECT 1 FROM annotation_uses_attachment u JOIN annotation_attachment o ON o.attachment_id = u.attachment_id WHERE o.sha256 = t.sha256)
          RETURNING t.sha256`, [sqlTextArray([...new Set(used.map((u) => u.attachment_id))])]);
      report.unusedSha256 = [...new Set(unused.map((u) => u.sha256))];
    }
  });
  return report;
}
