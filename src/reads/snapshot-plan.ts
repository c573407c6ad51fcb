// What a snapshot of one resolve body needs per attribute, kept between reads: the series
// whose binding covers the instant, its slot in the latest-point table, the binding's
// bounds as words, the enum names and the item's fixed JSON text. A repeated snapshot (an
// HMI polling a plant, the issue 26 figures) then does no resolution, no per-attribute
// object and no map lookup: read-snapshot.ts reads the slots into typed arrays and writes
// the body from them.
//
// A plan answers instants in [fromNs, untilNs): between two binding boundaries of the
// cached resolution (read-resolution.ts, ReadResolution.instantStable) the same bindings
// cover every attribute, so a binding that starts or ends later (a rebind dated ahead) is
// followed when its instant comes. Any model commit or auth change of this process drops
// every plan (the resolution cache's rule and assumption: one process per model database).
// Only the current model (no as_of_ns), without unit conversion: other snapshots resolve
// each time (snapshot-read.ts). Callers who may read everything share a plan; any other
// caller's plan is its own, filtered by its grants. A plan with an attribute whose series
// has no storage record yet is used once and not kept (the record may appear any time).
//
//   snapshotPlanFor(service, can, req, atNs) -> Promise<SnapshotPlan | null>  (null: resolve as usual)
import type { ServiceContext } from '../service-context.js';
import { onModelCommit } from '../model/tx-log.js';
import type { EnumMemberNames } from '../series/enum-members.js';
import { enumRefOf, shapeValue, type EnumRef } from '../workers/resolved-points.js';
import { stringifyJson } from '../json/json.js';
import type { ValueType } from '../storage/encoding/chunk-types.js';
import { resolveRead, type Can, type ReadAttribute, type ReadResolution, type ResolveRequest } from './read-resolution.js';
import { memberNamesOf } from './read-members.js';
import { clearedAnswers, planAnswers, type PlanAnswers } from './read-snapshot.js';

/** Plans kept per service at most (least recently used goes first). */
const PLANS_KEPT = 1_024;
/** Attributes in all kept plans at most (~250 B each: ~50 MB). */
const ATTRIBUTES_KEPT = 200_000;
/** Bodies longer than this (long attribute id lists) are resolved each time, as read-resolution.ts does. */
const LONGEST_KEY = 64 * 1024;
const INT64_MAX = 2n ** 63n - 1n;
/** How long a scoped caller's plan answers (the access cache's CACHE_TTL_MS). */
const SCOPED_PLAN_NS = 30_000_000_000n;

export class SnapshotPlan {
  readonly n: number;
  /** Per attribute: the series answering it (the last covering segment with a storage record), null: unbound at the instant. */
  readonly series: Array<string | null>;
  readonly types: Array<ValueType | null>;
  /** Its slot in the latest-point table (LatestTable.slotOf), -1 until the series has one; slots never move. */
  readonly slots: Int32Array;
  /** The binding's from and to (INT64_MAX while open) as int64 words: [from lo, from hi, to lo, to hi] per attribute. */
  readonly bounds: Int32Array;
  readonly enumRefs: Array<EnumRef | null>;
  /** `{"attribute_id":…,"path":…,"unit_id":…,"snapshot":` as UTF-8. */
  readonly heads: Uint8Array[];
  /** False when an attribute's series had no storage record: not kept. */
  readonly keepable: boolean;
  private spareAnswers: PlanAnswers | null = null;
  /** enumText's texts: by enum set id ('' for none), then by ordinal. */
  private readonly enumTexts = new Map<string, Map<number, Uint8Array>>();

  constructor(
    readonly resolution: ReadResolution,
    readonly members: Record<string, EnumMemberNames> | undefined,
    readonly fromNs: bigint,
    readonly untilNs: bigint,
  ) {
    const attributes = resolution.attributes;
    const n = this.n = attributes.length;
    this.series = new Array(n); this.types = new Array(n); this.enumRefs = new Array(n); this.heads = new Array(n);
    this.slots = new Int32Array(n).fill(-1);
    this.bounds = new Int32Array(4 * n);
    const words = new BigInt64Array(this.bounds.buffer);
    let keepable = true;
    for (let k = 0; k < n; k++) {
      const a = attributes[k];
      let seg = null;
      for (let i = a.segments.length - 1; i >= 0; i--) if (a.segments[i].valueType !== null) { seg = a.segments[i]; break; }
      if (seg === null && a.segments.length > 0) keepable = false;
      this.series[k] = seg?.seriesId ?? null;
      this.types[k] = seg?.valueType ?? null;
      this.enumRefs[k] = seg !== null && seg.valueType === 'enum' ? enumRefOf(members, { enumSetId: seg.enumSetId }) : null;
      words[2 * k] = seg?.boundFromNs ?? 0n;
      words[2 * k + 1] = seg?.boundToNs ?? INT64_MAX;
      this.heads[k] = headBytes(a);
    }
    this.keepable = keepable;
  }

  /**
   * An enum value's JSON text (`{"enum_set":…,"ordinal":…,"member":…}`) as UTF-8, kept per
   * enum set and ordinal for the plan's life: the names are the plan's, so the text of an
   * ordinal never changes, and writing it afresh (an object through the JSON writer) cost
   * ~1.7 µs an item, a sixth of a 1,000-attribute body's writing (profile, 2026-11-28).
   */
  enumText(k: number, ordinal: number): Uint8Array {
    const ref = this.enumRefs[k]!;
    const key = ref.id ?? '';
    let texts = this.enumTexts.get(key);
    if (texts === undefined) { texts = new Map(); this.enumTexts.set(key, texts); }
    let text = texts.get(ordinal);
    if (text === undefined) {
      text = Buffer.from(stringifyJson(shapeValue(ordinal, 'enum', ref, null)), 'utf8');
      texts.set(ordinal, text);
    }
    return text;
  }

  /** A read's answers of this plan's size: one kept from an earlier read, or new. */
  takeAnswers(): PlanAnswers {
    const a = this.spareAnswers ?? planAnswers(this.n);
    this.spareAnswers = null;
    return a;
  }

  /** Keeps `a` for the next read once its body is written (one at a time: concurrent reads take new ones). */
  giveAnswers(a: PlanAnswers): void {
    this.spareAnswers = clearedAnswers(a);
  }

  /** The resolution as of instant `atNs` (its window and model instant; the same attributes). */
  at(atNs: bigint): ReadResolution {
    return { modelTx: this.resolution.modelTx, modelAsOfNs: atNs, window: { startNs: atNs, endNs: atNs + 1n }, attributes: this.resolution.attributes };
  }
}

function headBytes(a: ReadAttribute): Uint8Array {
  return Buffer.from(`{"attribute_id":"${a.attributeId}","path":${JSON.stringify(a.path)},"unit_id":${a.unitId === null ? 'null' : `"${a.unitId}"`},"snapshot":`, 'utf8');
}

interface Kept { epoch: number; authGeneration: number; entries: Map<string, SnapshotPlan>; held: number }
const kept = new WeakMap<ServiceContext, Kept>();
/** Moved by every model commit of this process. */
let epoch = 0;
let listening = false;

function keptPlans(service: ServiceContext): Kept {
  if (!listening) {
    listening = true;
    onModelCommit(() => { epoch++; });
  }
  const authGeneration = service.access.generation;
  let k = kept.get(service);
  if (k === undefined) { k = { epoch, authGeneration, entries: new Map(), held: 0 }; kept.set(service, k); }
  if (k.epoch !== epoch || k.authGeneration !== authGeneration) { k.entries.clear(); k.held = 0; k.epoch = epoch; k.authGeneration = authGeneration; }
  return k;
}

/** The plan answering `req` at `atNs` (kept or built; see the file header); null when this snapshot resolves as usual. */
export async function snapshotPlanFor(service: ServiceContext, can: Can, principalId: string | null, req: ResolveRequest, atNs: bigint): Promise<SnapshotPlan | null> {
  if (req.as_of_ns != null) return null;
  // callers who may read everything share one plan per body; any other caller has its own,
  // filtered by its grants as of this auth generation (a grant change drops every plan)
  const reader = (await can('read', { kind: 'global' })) ? '*' : principalId;
  if (reader === null) return null;
  const key = JSON.stringify([reader, req.select, req.scope, req.include_retired ?? false]);
  if (key.length > LONGEST_KEY) return null;
  const plans = keptPlans(service);
  const hit = plans.entries.get(key);
  if (hit !== undefined && atNs >= hit.fromNs && atNs < hit.untilNs) {
    plans.entries.delete(key);
    plans.entries.set(key, hit);
    return hit;
  }
  const at = epoch, atGeneration = service.access.generation;
  const r = await resolveRead(service, can, req, { atNs });
  if (r.instantStable === undefined) return null;
  // a scoped caller's plan is rebuilt as often as the access cache reloads grants, which
  // bounds how long a change made by another process can go unseen
  const untilNs = reader === '*' || r.instantStable.untilNs - atNs < SCOPED_PLAN_NS ? r.instantStable.untilNs : atNs + SCOPED_PLAN_NS;
  const plan = new SnapshotPlan(r, await memberNamesOf(service, r), r.instantStable.fromNs, untilNs);
  if (at === epoch && atGeneration === service.access.generation && plan.keepable && plan.n <= ATTRIBUTES_KEPT) {
    const now = keptPlans(service);
    const old = now.entries.get(key);
    if (old !== undefined) { now.entries.delete(key); now.held -= old.n; }
    while (now.entries.size > 0 && (now.entries.size >= PLANS_KEPT || now.held + plan.n > ATTRIBUTES_KEPT)) {
      const [oldest, gone] = now.entries.entries().next().value as [string, SnapshotPlan];
      now.entries.delete(oldest);
      now.held -= gone.n;
    }
    now.entries.set(key, plan);
    now.held += plan.n;
  }
  return plan;
}
