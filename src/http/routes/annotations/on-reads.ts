// `include_annotations` on resolved reads: each attribute's annotations over the read's
// window (its own, and its asset's), as `annotations` on its result (read-attachments.ts).
// With `annotations_cluster_px` > 0, annotations whose pixels at the read's width come
// closer than that are merged into one cluster {start_ns, end_ns, cluster {count,
// annotation_ids}}: a trend of a year with a thousand notes draws a few markers. The width
// is render's `width`; other reads have none and are taken as DEFAULT_WIDTH pixels wide.
import type { ReadAttacher, AttachWindow, AttachedAttribute } from '../reads/read-attachments.js';
import type { HandlerContext } from '../../route.js';
import { annotationsOnAttributes } from '../../../annotations/annotation-query.js';
import type { AnnotationView } from '../../../annotations/annotation-store.js';
import { annotationReader } from './annotation-access.js';

/** The width a read without one is clustered at (a typical trend's plot width). */
export const DEFAULT_WIDTH = 1000;

type OnRead = { annotation_id: string; start_ns: bigint; end_ns: bigint; text: string | null; tags: string[]; redacted: boolean; target: 'attribute' | 'asset' | 'episode' };
type Cluster = { start_ns: bigint; end_ns: bigint; cluster: { count: number; annotation_ids: string[] } };

function onRead(v: AnnotationView, viaAsset: boolean): OnRead {
  return {
    annotation_id: v.annotation_id, start_ns: v.start_ns, end_ns: v.end_ns, text: v.text, tags: v.tags, redacted: v.redacted !== null,
    target: viaAsset ? 'asset' : 'attribute',
  };
}

/**
 * Merges annotations (in start order) whose gap at `width` pixels over [startNs, endNs) is
 * under `px` pixels. A lone annotation stays as it is.
 */
export function clusterAnnotations(list: OnRead[], window: { startNs: bigint; endNs: bigint }, width: number, px: number): Array<OnRead | Cluster> {
  const span = Number(window.endNs - window.startNs);
  const at = (t: bigint) => (Number(t - window.startNs) * width) / span;
  const out: Array<OnRead | Cluster> = [];
  let group: OnRead[] = [];
  let groupEnd = 0n;
  const flush = () => {
    if (group.length === 1) out.push(group[0]);
    else if (group.length > 1) {
      out.push({ start_ns: group[0].start_ns, end_ns: groupEnd, cluster: { count: group.length, annotation_ids: group.map((g) => g.annotation_id) } });
    }
    group = [];
  };
  for (const a of list) {
    if (group.length > 0 && at(a.start_ns) - at(groupEnd) >= px) flush();
    if (group.length === 0 || a.end_ns > groupEnd) groupEnd = a.end_ns;
    group.push(a);
  }
  flush();
  return out;
}

async function collect(ctx: HandlerContext, attributes: AttachedAttribute[], window: AttachWindow, body: Record<string, unknown>): Promise<Map<string, unknown>> {
  const w = 'atNs' in window ? { startNs: window.atNs, endNs: window.atNs + 1n } : window;
  const byAsset = new Map<string, string[]>();
  for (const a of attributes) byAsset.set(a.assetId, [...(byAsset.get(a.assetId) ?? []), a.attributeId]);
  const found = await annotationsOnAttributes(ctx.service.db, attributes.map((a) => a.attributeId), [...byAsset.keys()], w);
  const mayRead = annotationReader(ctx);
  const lists = new Map<string, OnRead[]>(attributes.map((a) => [a.attributeId, []]));
  const seen = new Set<string>();
  for (const f of found) {
    if (!(await mayRead(f.view))) continue;
    const viaAsset = byAsset.has(f.targetId) && !lists.has(f.targetId);
    for (const attributeId of viaAsset ? byAsset.get(f.targetId) ?? [] : [f.targetId]) {
      // a note on two attributes of one read shows on both, once each
      const key = `${attributeId}/${f.view.annotation_id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      lists.get(attributeId)?.push(onRead(f.view, viaAsset));
    }
  }
  const px = typeof body.annotations_cluster_px === 'number' ? body.annotations_cluster_px : 0;
  const width = typeof body.width === 'number' && body.width > 0 ? body.width : DEFAULT_WIDTH;
  const out = new Map<string, unknown>();
  for (const [id, list] of lists) out.set(id, px > 0 ? clusterAnnotations(list, w, width, px) : list);
  return out;
}

export const annotationsAttacher: ReadAttacher = {
  member: 'annotations',
  wanted: (body) => body.include_annotations === true,
  collect,
};
