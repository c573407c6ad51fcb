// Resolution of a read body (spec "Resolved reads"): the `resolve` object turned, through
// the model (as of `as_of_ns` when given), into the attributes the caller may read, each
// with its path, what the effective attribute says about its values (value type of its
// series, continuity, quantity kind, unit) and its segments: the bindings covering the
// read's window [startNs, endNs), clipped to it, in time order, each naming its series. A
// sensor swap inside the window gives two segments; an unbound attribute has none (never
// an error). Results the caller may not read are left out (scope "each resolved result").
//
// Exported API (stable; D2/D3 and later areas extend it additively):
//   resolveRead(service, can, req, window) -> Promise<ReadResolution>
//     service: the ServiceContext; can: the handler's ctx.can (capability, target);
//     req: the validated `resolve` object; window: {startNs, endNs} ([start, end), bigint),
//     or {atNs} for an instant read (snapshot: the bindings covering that instant).
//   ReadResolution { modelTx, modelAsOfNs, window, attributes: ReadAttribute[] }  (path order)
//   ReadAttribute  { attributeId, assetId, name, path, assetPath, valueType, continuity,
//                    continuityClass, quantityKindId, unitId, enumSetId, segments }
//   ReadSegment    { seriesId, bindingId, startNs, endNs, valueType, enumSetId, boundFromNs, boundToNs }
//   continuityOf(continuityClass, valueType) -> 'continuous' | 'stepped' | 'event'
import type { ServiceContext } from '../service-context.js';
import type { Capability } from '../auth/capabilities.js';
import type { AccessTarget } from '../auth/access-types.js';
import { ServiceError } from '../errors.js';
import { nowNs } from '../clock.js';
import { resolve, type Resolution, type ResolveRequest } from '../model/resolve/resolve.js';
import { onModelCommit } from '../model/tx-log.js';
import type { AssetModel } from '../model/assets/asset-model.js';
import { readMeta } from '../storage/series-store.js';
import type { ValueType } from '../storage/encoding/chunk-types.js';

export type { ResolveRequest } from '../model/resolve/resolve.js';

/** How values between stored points are read: the three continuity kinds of the spec. */
export type ReadContinuity = 'continuous' | 'stepped' | 'event';

export interface ReadSegment {
  seriesId: string;
  bindingId: string;
  /** Clipped to the window: max(binding from, window start). */
  startNs: bigint;
  /** Clipped to the window, exclusive: min(binding to, window end). */
  endNs: bigint;
  /** The series' stored type; null when the series has no storage record (created in the model only). */
  valueType: ValueType | null;
  /** The enum set the series' points name (enum series only; null otherwise or without a storage record). */
  enumSetId: string | null;
  /** The binding's own bounds, unclipped (to null while open): the value before the window comes from [boundFromNs, startNs). */
  boundFromNs: bigint;
  boundToNs: bigint | null;
}

export interface ReadAttribute {
  attributeId: string;
  assetId: string;
  name: string;
  /** `<asset path>/<attribute name>`. */
  path: string;
  assetPath: string;
  /** The type of the latest segment's series; null when unbound in the window. */
  valueType: ValueType | null;
  continuity: ReadContinuity;
  /** As the effective attribute carries it (continuous, stepped, event). */
  continuityClass: string;
  quantityKindId: string | null;
  /** The unit stored values are in: the effective attribute's display unit. */
  unitId: string | null;
  enumSetId: string | null;
  segments: ReadSegment[];
}

export interface ReadWindow { startNs: bigint; endNs: bigint }

export interface ReadResolution {
  /** The model transaction answered (the as-of one, or the newest). */
  modelTx: bigint;
  /** The model instant answered: `as_of_ns` when given, else the time of resolution. */
  modelAsOfNs: bigint;
  window: ReadWindow;
  attributes: ReadAttribute[];
  /**
   * An instant read of the current model (not as of): the instants [fromNs, untilNs)
   * around it at which the same bindings cover every attribute (no binding of the cached
   * resolution starts or ends in between), so the same attributes and segments answer
   * any instant in it until the next model commit (snapshot-plan.ts keeps them).
   */
  instantStable?: { fromNs: bigint; untilNs: bigint };
}

export type Can = (capability: Capability, target: AccessTarget) => Promise<boolean>;

/** Reads of metadata done on the HTTP thread per slice, so one resolve never holds the event loop long. */
const META_SLICE = 2_000;

/**
 * Value types and enum sets of series already seen: a series keeps both for life (set when
 * it is created; the engine refuses to re-create it with another type) and ids are never
 * reused, so entries never go stale. Saves an LMDB read and a key build per attribute on
 * every read (a few µs each on this thread).
 */
const seriesTypes = new Map<string, { type: ValueType; enumSetId: string | null }>();
const SERIES_TYPES_KEPT = 1_000_000;

/**
 * Resolutions of the current model, by model and resolve body (select, scope,
 * include_retired): the attributes with every binding version (unclipped, all time) and
 * before any permission filter, so one entry serves every window and every caller (the
 * window and the caller's scope are applied per read below, in memory). Any model commit
 * of this process empties them all, synchronously before the writer answers (the same feed
 * and the same one-process-per-model-database assumption as the model's attribute cache);
 * a fill that raced a commit is not kept (the epoch moved). A snapshot of 1,000 attributes
 * spent ~3 ms of its HTTP-thread time resolving (issue 26 profile), most of it again and
 * again for an unchanged model. The count bound is well above the live subscriptions one
 * process serves (each resolves again every 30-36 s: with 64 kept, 1,000 subscriptions of
 * different attributes missed every time, ~5 s of model-thread CPU a round); the
 * attribute bound below is what limits memory.
 */
const RESOLUTIONS_KEPT = 16_384;
/** Attributes held in all kept resolutions at most (~500 B each: ~100 MB); a larger answer is not kept. */
const ATTRIBUTES_KEPT = 200_000;
/** Bodies longer than this (long attribute id lists) are resolved each time. */
const LONGEST_CACHED_KEY = 64 * 1024;
const resolutions = new WeakMap<AssetModel, { epoch: number; entries: Map<string, Resolution>; held: number }>();
/** Moved by every model commit of this process. */
let epoch = 0;
let listening = false;
const ALL_TIME: [bigint, bigint] = [-(2n ** 63n), 2n ** 63n - 1n];

/** The model's kept resolutions of the current epoch (those of an older one are dropped here). */
function cachedResolutions(model: AssetModel): { entries: Map<string, Resolution>; held: number } {
  if (!listening) {
    listening = true;
    onModelCommit(() => { epoch++; });
  }
  let kept = resolutions.get(model);
  if (kept === undefined) { kept = { epoch, entries: new Map(), held: 0 }; resolutions.set(model, kept); }
  if (kept.epoch !== epoch) { kept.entries.clear(); kept.held = 0; kept.epoch = epoch; }
  return kept;
}

/** The current model's resolution of `req` over all time, for every caller (cached, see above); null when `req` is not cacheable. */
async function currentResolution(model: AssetModel, req: ResolveRequest): Promise<Resolution | null> {
  if (req.as_of_ns != null) return null;
  const key = JSON.stringify([req.select, req.scope, req.include_retired ?? false]);
  if (key.length > LONGEST_CACHED_KEY) return null;
  const kept0 = cachedResolutions(model);
  const hit = kept0.entries.get(key);
  if (hit !== undefined) {
    // most recently used last: the oldest entry is the first to go
    kept0.entries.delete(key);
    kept0.entries.set(key, hit);
    return hit;
  }
  const at = epoch;
  const r = await resolve(model, { ...req, range: ALL_TIME }, async () => true);
  if (at === epoch && r.results.length <= ATTRIBUTES_KEPT) {
    const kept = cachedResolutions(model);
    while (kept.entries.size > 0 && (kept.entries.size >= RESOLUTIONS_KEPT || kept.held + r.results.length > ATTRIBUTES_KEPT)) {
      const [oldest, gone] = kept.entries.entries().next().value as [string, Resolution];
      kept.entries.delete(oldest);
      kept.held -= gone.results.length;
    }
    kept.entries.set(key, r);
    kept.held += r.results.length;
  }
  return r;
}

/**
 * The attribute's continuity class (the model's closed vocabulary: continuous, stepped,
 * event) as the read applies it. A continuous class over a series that has no numeric
 * order between values (boolean, enum, string) reads as stepped: there is nothing between
 * `open` and `closed` to interpolate. A class outside the vocabulary (rows older than
 * it) reads by value type: float64 continuous, other types stepped.
 */
export function continuityOf(continuityClass: string, valueType: ValueType | null): ReadContinuity {
  const numeric = valueType === null || valueType === 'float64' || valueType === 'int64';
  if (continuityClass === 'continuous') return numeric ? 'continuous' : 'stepped';
  if (continuityClass === 'stepped' || continuityClass === 'event') return continuityClass;
  return valueType === null || valueType === 'float64' ? 'continuous' : 'stepped';
}

function modelOf(service: ServiceContext) {
  const m = service.parts.model;
  if (!m) throw new ServiceError('model-unavailable', 'the asset model is not started');
  return m;
}

/** Resolves `req` over the window; see the file header. */
export async function resolveRead(service: ServiceContext, can: Can, req: ResolveRequest, window: ReadWindow | { atNs: bigint }): Promise<ReadResolution> {
  const model = modelOf(service);
  const everything = await can('read', { kind: 'global' });
  const seen = new Map<string, boolean>();
  const visible = async (assetId: string): Promise<boolean> => {
    if (everything) return true;
    let ok = seen.get(assetId);
    if (ok === undefined) { ok = await can('read', { kind: 'asset', id: assetId }); seen.set(assetId, ok); }
    return ok;
  };
  const atNs = 'atNs' in window ? window.atNs : null;
  const w: ReadWindow = atNs !== null ? { startNs: atNs, endNs: atNs + 1n } : window as ReadWindow;
  if (w.endNs <= w.startNs) throw new ServiceError('invalid-request', 'end_ns: must be greater than start_ns', { errors: [{ field: 'end_ns', problem: 'not after start_ns' }] });
  // The model's range is inclusive at both ends: [start, end - 1] is the window [start, end).
  const asked: ResolveRequest = { ...req, range: atNs !== null ? [atNs, atNs] : [w.startNs, w.endNs - 1n] };
  const modelAsOfNs = req.as_of_ns == null ? nowNs() : BigInt(req.as_of_ns);
  // The current model comes from the cache (all bindings, nobody's scope): the window
  // clips the bindings below, and the caller's scope is applied here, per asset.
  const current = await currentResolution(model, req);
  let r: Resolution;
  if (current === null) r = await resolve(model, asked, visible);
  else if (everything) r = current;
  else {
    const kept = [];
    for (const a of current.results) if (await visible(a.asset_id)) kept.push(a);
    r = { model_tx: current.model_tx, results: kept };
  }

  const storage = service.parts.storage;
  const attributes: ReadAttribute[] = new Array(r.results.length);
  for (let from = 0; from < r.results.length; from += META_SLICE) {
    if (from > 0) await new Promise<void>((done) => setImmediate(done));
    const to = Math.min(r.results.length, from + META_SLICE);
    storage.read((view) => {
      for (let i = from; i < to; i++) {
        const a = r.results[i];
        const segments: ReadSegment[] = [];
        for (const b of a.bindings) {
          const startNs = b.from_ns > w.startNs ? b.from_ns : w.startNs;
          const endNs = b.to_ns !== null && b.to_ns < w.endNs ? b.to_ns : w.endNs;
          if (endNs <= startNs) continue;
          let known = seriesTypes.get(b.series_id);
          if (known === undefined) {
            const meta = readMeta(view, b.series_id);
            if (meta !== undefined) {
              known = { type: meta.type, enumSetId: meta.enumSet?.id ?? null };
              if (seriesTypes.size >= SERIES_TYPES_KEPT) seriesTypes.clear();
              seriesTypes.set(b.series_id, known);
            }
          }
          segments.push({
            seriesId: b.series_id, bindingId: b.binding_id, startNs, endNs, valueType: known?.type ?? null, enumSetId: known?.enumSetId ?? null,
            boundFromNs: b.from_ns, boundToNs: b.to_ns,
          });
        }
        segments.sort((x, y) => (x.startNs < y.startNs ? -1 : x.startNs > y.startNs ? 1 : 0));
        const valueType = segments.length > 0 ? segments[segments.length - 1].valueType : null;
        attributes[i] = {
          attributeId: a.attribute_id, assetId: a.asset_id, name: a.name, path: a.path, assetPath: a.asset_path,
          valueType, continuity: continuityOf(a.continuity_class, valueType), continuityClass: a.continuity_class,
          quantityKindId: a.quantity_kind_id, unitId: a.display_unit_id, enumSetId: a.enum_set_id, segments,
        };
      }
    });
  }
  const out: ReadResolution = { modelTx: r.model_tx, modelAsOfNs, window: w, attributes };
  if (atNs !== null && current !== null) out.instantStable = stableAround(current, atNs);
  return out;
}

/** The instants around `at` at which no binding of `r` starts or ends (ReadResolution.instantStable). */
function stableAround(r: Resolution, at: bigint): { fromNs: bigint; untilNs: bigint } {
  let fromNs = ALL_TIME[0], untilNs = ALL_TIME[1];
  for (const a of r.results) {
    for (const b of a.bindings) {
      if (b.from_ns <= at) { if (b.from_ns > fromNs) fromNs = b.from_ns; } else if (b.from_ns < untilNs) untilNs = b.from_ns;
      if (b.to_ns !== null) { if (b.to_ns <= at) { if (b.to_ns > fromNs) fromNs = b.to_ns; } else if (b.to_ns < untilNs) untilNs = b.to_ns; }
    }
  }
  return { fromNs, untilNs };
}
