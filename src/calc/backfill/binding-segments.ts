// A backfill reads each input through the binding that covered the instant, not only the
// attribute's current binding: an attribute rebound to a new series (a replaced
// transmitter, a collector renamed) keeps its history in the old series, and a
// recalculation over that history must read it there. The range of each asset is cut where
// any input's binding changes; every window lies inside one segment and reads the series
// bound over it (none: the input reads as no value there). The bindings are the model
// cache's valid-time history of each input attribute as the model is now.
//
// Known limit: a window's look-back (the value in force at its start, prev/delta, windows
// of functions over time) reads the segment's series, so just after a cut the value in
// force before it comes from the new series' own earlier points, if it has any.
import type { ServiceContext } from '../../service-context.js';
import type { Binding } from '../../model/bindings/bindings.js';
import { placeOf, loadNeighbourhood } from '../rules/rule-check.js';
import { attributeFor } from '../rules/rule-scope.js';
import type { RulePlan } from '../engine/rule-plan.js';
import type { Target } from '../engine/pool-windows.js';

interface AssetBindings {
  /** Per input reference: the attribute's bindings, by from_ns (empty: not resolvable now). */
  byRef: Map<string, Binding[]>;
  /** Instants inside the range where an input's binding begins or ends, ascending. */
  cuts: bigint[];
  /** Targets already made for a segment, by the segment's first instant. */
  made: Map<bigint, Target>;
}

export class BindingSegments {
  private constructor(private readonly assets: Map<string, AssetBindings>) {}

  /** The bindings of the plan's targets' inputs, with the cuts that fall inside [start, end). */
  static async of(service: ServiceContext, plan: RulePlan, assetIds: readonly string[], start: bigint, end: bigint): Promise<BindingSegments> {
    const place = await placeOf(service, service.db, plan.rule);
    await loadNeighbourhood(service, place);
    const wanted = new Set(assetIds);
    const out = new Map<string, AssetBindings>();
    for (const a of place.assets) {
      if (!wanted.has(a.asset_id)) continue;
      const byRef = new Map<string, Binding[]>();
      const cuts = new Set<bigint>();
      for (const ref of plan.compiled.inputRefs) {
        const c = attributeFor(place.tree, a, ref, place.attributes);
        const list = c ? [...c.bindings].sort((x, y) => (x.from_ns < y.from_ns ? -1 : x.from_ns > y.from_ns ? 1 : 0)) : [];
        byRef.set(ref, list);
        for (const b of list) {
          if (b.from_ns > start && b.from_ns < end) cuts.add(b.from_ns);
          if (b.to_ns !== null && b.to_ns > start && b.to_ns < end) cuts.add(b.to_ns);
        }
      }
      out.set(a.asset_id, { byRef, cuts: [...cuts].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)), made: new Map() });
    }
    return new BindingSegments(out);
  }

  /** The first cut of the asset after `from` (null: none before the range ends). */
  nextCut(assetId: string, from: bigint): bigint | null {
    const cuts = this.assets.get(assetId)?.cuts;
    if (!cuts) return null;
    for (const c of cuts) if (c > from) return c;
    return null;
  }

  /** The target reading, for each input, the series bound at instant `at` (the plan's own when they agree). */
  targetAt(base: Target, at: bigint): Target {
    const a = this.assets.get(base.assetId);
    if (!a || a.cuts.length === 0 && sameSeries(base, a, at)) return base;
    let segStart = -(2n ** 63n);
    for (const c of a.cuts) if (c <= at) segStart = c;
    const known = a.made.get(segStart);
    if (known) return known;
    const seriesByRef = new Map<string, string | null>();
    for (const [ref, list] of a.byRef) seriesByRef.set(ref, list.length === 0 ? base.seriesByRef.get(ref) ?? null : boundAt(list, at));
    const t = [...seriesByRef].every(([ref, s]) => base.seriesByRef.get(ref) === s) ? base : { ...base, seriesByRef };
    a.made.set(segStart, t);
    return t;
  }
}

function boundAt(list: readonly Binding[], at: bigint): string | null {
  for (const b of list) if (b.from_ns <= at && (b.to_ns === null || at < b.to_ns)) return b.series_id;
  return null;
}

function sameSeries(base: Target, a: AssetBindings, at: bigint): boolean {
  for (const [ref, list] of a.byRef) if (list.length > 0 && boundAt(list, at) !== (base.seriesByRef.get(ref) ?? null)) return false;
  return true;
}
