// Which attributes a widget draws. A widget's bindings hold attribute selectors (spec:
// `{kind: attribute-id, attribute_id}`, `{kind: template-relative, name}`,
// `{kind: unresolved, name, reason}`): at `traces[].attribute`, `attribute` and
// `attributes[]` as the service reads them, and wherever else a kind puts them; each is
// found with its JSON pointer in the document. A stored display resolves in its context
// asset through GET /v1/displays/resolve (PI Vision's "swap asset"), so the page draws
// exactly what the service resolves and lints; selectors the service does not list (and
// the ad hoc trend, which is not stored) resolve here: a name on the context asset through
// POST /v1/model/resolve, a path below it (`Motor/Bearing|Temperature`) through
// GET /v1/model/resolve-path. The attributes' names and limits then come in one
// POST /v1/model/resolve by id.
import { get, post, isMissingRoute, type ResolveAnswer, type ResolvedAttribute } from './api.js';

export type Selector =
  | { kind: 'attribute-id'; attribute_id: string }
  | { kind: 'template-relative'; name: string }
  | { kind: 'unresolved'; name?: string; reason?: string };

export interface SelectorSlot {
  selector: Selector;
  /** The object that held it (a trace, the bindings): label, limits, pen, continuity. */
  holder: Record<string, unknown>;
  /** RFC 6901 pointer in the display document. */
  pointer: string;
}

export type Resolution = { attributeId: string; label: string; limits: unknown; pen?: unknown; continuity?: unknown } | { unresolved: string };

interface ServerResolution {
  selectors: Array<{ pointer: string; resolved: { kind: 'attribute-id'; attribute_id: string } | { kind: 'unresolved'; name: string; reason: string }; path: string | null }>;
}

function isSelector(v: unknown): v is Selector {
  if (!v || typeof v !== 'object') return false;
  const k = (v as { kind?: unknown }).kind;
  return k === 'attribute-id' || k === 'template-relative' || k === 'unresolved';
}

/** Every selector in a widget's bindings, in document order; `base` is the bindings' pointer (/widgets/3/bindings). */
export function selectorsOf(bindings: unknown, base: string): SelectorSlot[] {
  const out: SelectorSlot[] = [];
  const walk = (v: unknown, holder: Record<string, unknown>, at: string) => {
    if (isSelector(v)) { out.push({ selector: v, holder, pointer: at }); return; }
    if (Array.isArray(v)) { v.forEach((x, i) => walk(x, holder, `${at}/${i}`)); return; }
    if (!v || typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    for (const [k, x] of Object.entries(o)) if (k !== 'limits' && k !== 'x') walk(x, o, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  };
  walk(bindings, {}, base);
  return out;
}

/** The service's resolution of a stored display, by pointer; empty when the service cannot say. */
export async function serverResolution(displayId: string, contextAsset: string | null): Promise<Map<string, ServerResolution['selectors'][number]>> {
  try {
    const q = `display_id=${displayId}${contextAsset ? `&asset_id=${contextAsset}` : ''}`;
    const r = await get<ServerResolution>(`/v1/displays/resolve?${q}`);
    return new Map(r.selectors.map((s) => [s.pointer, s]));
  } catch (e) {
    if (isMissingRoute(e)) return new Map();
    throw e;
  }
}

type Found = { attributeId: string } | { unresolved: string };

/** Resolves every slot of a display; `server` is serverResolution's answer (or empty). */
export async function resolveSelectors(slots: SelectorSlot[], contextAsset: string | null, server: Map<string, ServerResolution['selectors'][number]>): Promise<Resolution[]> {
  const byName = new Map<string, Promise<ResolveAnswer | null>>();
  const found = await Promise.all(slots.map(async ({ selector: s, pointer }): Promise<Found> => {
    const known = server.get(pointer);
    if (known) return known.resolved.kind === 'attribute-id' ? { attributeId: known.resolved.attribute_id } : { unresolved: `${known.resolved.name}: ${known.resolved.reason}` };
    if (s.kind === 'attribute-id') return { attributeId: s.attribute_id };
    if (s.kind === 'unresolved') return { unresolved: `${s.name ?? 'attribute'}: ${s.reason ?? 'unresolved'}` };
    if (!contextAsset) return { unresolved: `${s.name}: no context asset (open the display from an asset)` };
    if (s.name.includes('|')) return resolveRelativePath(s.name, contextAsset);
    let answer = byName.get(s.name);
    if (!answer) {
      answer = post<ResolveAnswer>('/v1/model/resolve', {
        select: { kind: 'attributes_named', content: { name: s.name } }, scope: { under: { kind: 'asset_id', content: contextAsset } },
      }).catch(() => null);
      byName.set(s.name, answer);
    }
    const a = (await answer)?.results.find((r) => r.asset_id === contextAsset);
    return a ? { attributeId: a.attribute_id } : { unresolved: `${s.name}: the context asset has no attribute of that name` };
  }));
  const ids = [...new Set(found.flatMap((f) => ('attributeId' in f ? [f.attributeId] : [])))];
  const details = new Map<string, ResolvedAttribute>();
  if (ids.length > 0) {
    const r = await post<ResolveAnswer>('/v1/model/resolve', { select: { kind: 'attribute_ids', content: ids }, scope: {} }).catch(() => null);
    for (const a of r?.results ?? []) details.set(a.attribute_id, a);
  }
  return found.map((f, i): Resolution => {
    if (!('attributeId' in f)) return f;
    const { holder } = slots[i];
    const a = details.get(f.attributeId);
    const label = typeof holder.label === 'string' && holder.label !== '' ? holder.label : (a?.path ?? '');
    return {
      attributeId: f.attributeId, label, limits: holder.limits ?? a?.limit_traits ?? null,
      pen: (holder.pen as { token?: unknown } | undefined)?.token, continuity: holder.continuity ?? a?.continuity_class,
    };
  });
}

const assetPaths = new Map<string, Promise<string>>();

/** `Motor/Bearing|Temperature`: an attribute of an asset under the context asset, by path. */
async function resolveRelativePath(name: string, contextAsset: string): Promise<Found> {
  let base = assetPaths.get(contextAsset);
  if (!base) {
    base = get<{ path: string | null }>(`/v1/model/assets/${contextAsset}`).then((a) => a.path ?? '');
    assetPaths.set(contextAsset, base);
  }
  try {
    const a = await get<ResolvedAttribute>(`/v1/model/resolve-path?path=${encodeURIComponent(`${await base}/${name}`)}`);
    return { attributeId: a.attribute_id };
  } catch (e) {
    return { unresolved: `${name}: ${e instanceof Error ? e.message : String(e)}` };
  }
}
