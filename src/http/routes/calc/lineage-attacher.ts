// `include_lineage` on resolved reads: each calculated attribute's result gets `lineage`
// (and `provenance.lineage`) in the spec's Lineage shape: the rule that wrote the series
// bound over the read's window, its version range and the windows each version produced.
// Attributes no rule writes get no member.
import type { ReadAttacher } from '../reads/read-attachments.js';
import { lineageFor } from '../../../calc/engine/lineage.js';

export const lineageAttacher: ReadAttacher = {
  member: 'lineage',
  alsoInProvenance: true,
  wanted: (body) => body.include_lineage === true,
  async collect(ctx, attributes, window) {
    const out = new Map<string, unknown>();
    if (attributes.length === 0) return out;
    const [start, end] = 'atNs' in window ? [window.atNs, window.atNs + 1n] : [window.startNs, window.endNs];
    const cached = await ctx.service.parts.model.attributes.forAssets([...new Set(attributes.map((a) => a.assetId))]);
    for (const a of attributes) {
      const c = cached.get(a.assetId)?.find((x) => x.effective.attribute_id === a.attributeId);
      if (!c) continue;
      // The series bound over the window, newest first: a calculated output is one series in practice.
      const bound = c.bindings.filter((b) => b.from_ns < end && (b.to_ns === null || b.to_ns > start)).reverse();
      for (const b of bound) {
        const lineage = await lineageFor(ctx.service.db, b.series_id, start, end);
        if (lineage.length > 0) { out.set(a.attributeId, lineage[0]); break; }
      }
    }
    return out;
  },
};
