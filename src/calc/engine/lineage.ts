// Lineage of an output series in the spec's shape: per rule, the range of its versions
// that wrote the series and the windows each version produced (calc_lineage, written by
// the engine and by backfills after their outputs were durable).
import type { Queryable } from '../../model/db.js';
import { lineageOf } from './progress-store.js';

export interface Lineage {
  rule_id: string;
  rule_version_range: [number, number];
  windows: Array<{ start_ns: bigint; end_ns: bigint; evaluated_at_ns: bigint; rule_version: number }>;
}

/** Lineage of a series over [startNs, endNs) (either end open when null), one entry per rule that wrote it. */
export async function lineageFor(q: Queryable, seriesId: string, startNs: bigint | null, endNs: bigint | null): Promise<Lineage[]> {
  const byRule = new Map<string, Lineage>();
  for (const w of await lineageOf(q, seriesId, startNs, endNs)) {
    let l = byRule.get(w.rule_id);
    if (!l) { l = { rule_id: w.rule_id, rule_version_range: [w.rule_version, w.rule_version], windows: [] }; byRule.set(w.rule_id, l); }
    if (w.rule_version < l.rule_version_range[0]) l.rule_version_range[0] = w.rule_version;
    if (w.rule_version > l.rule_version_range[1]) l.rule_version_range[1] = w.rule_version;
    l.windows.push({ start_ns: w.start_ns, end_ns: w.end_ns, evaluated_at_ns: w.evaluated_at_ns, rule_version: w.rule_version });
  }
  return [...byRule.values()];
}

/** The series an attribute is bound to now (its newest current binding), or null. */
export async function boundSeriesOf(q: Queryable, attributeId: string): Promise<string | null> {
  const { rows } = await q.query<{ series_id: string }>('SELECT series_id FROM binding_version WHERE attribute_id = $1 AND tx_to IS NULL ORDER BY from_ns DESC LIMIT 1', [attributeId]);
  return rows[0]?.series_id ?? null;
}
