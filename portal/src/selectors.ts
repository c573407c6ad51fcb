// Which attributes a widget draws. A widget's bindings hold attribute selectors (spec:
// `{kind: attribute-id, attribute_id}`, `{kind: template-relative, name}`,
// `{kind: unresolved, name, reason}`) wherever its kind puts them (a trend's traces, a
// table's rows); they are collected in document order. A template-relative selector
// resolves against the context asset through POST /v1/model/resolve (PI Vision's "swap
// asset"): the attribute of that name on the context asset itself.
import { get, post, type ResolveAnswer, type ResolvedAttribute } from './api.js';

export type Selector =
  | { kind: 'attribute-id'; attribute_id: string }
  | { kind: 'template-relative'; name: string }
  | { kind: 'unresolved'; name?: string; reason?: string };

export interface SelectorSlot { selector: Selector; /** The object that held it (a trace, a row): label, limits, pen. */ holder: Record<string, unknown> }

export type Resolution = { attributeId: string; label: string; limits: unknown; pen?: unknown; continuity?: unknown } | { unresolved: string };

function isSelector(v: unknown): v is Selector {
  if (!v || typeof v !== 'object') return false;
  const k = (v as { kind?: unknown }).kind;
  return k === 'attribute-id' || k === 'template-relative' || k === 'unresolved';
}

/** Every selector in a widget's bindings, in document order, with the object holding it. */
export function selectorsOf(bindings: unknown): SelectorSlot[] {
  const out: SelectorSlot[] = [];
  const walk = (v: unknown, holder: Record<string, unknown>) => {
    if (isSelector(v)) { out.push({ selector: v, holder }); return; }
    if (Array.isArray(v)) { for (const x of v) walk(x, holder); return; }
    if (!v || typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    for (const [k, x] of Object.entries(o)) if (k !== 'limits' && k !== 'x') walk(x, o);
  };
  walk(bindings, {});
  return out;
}

/** Resolves selectors; names on the context asset are looked up once per name. */
export async function resolveSelectors(slots: SelectorSlot[], contextAsset: string | null): Promise<Resolution[]> {
  const byName = new Map<string, Promise<ResolveAnswer | null>>();
  return Promise.all(slots.map(async ({ selector: s, holder }): Promise<Resolution> => {
    const label = typeof holder.label === 'string' ? holder.label : null;
    const pen = (holder.pen as { token?: unknown } | undefined)?.token, continuity = holder.continuity;
    if (s.kind === 'attribute-id') return { attributeId: s.attribute_id, label: label ?? '', limits: holder.limits ?? null, pen, continuity };
    if (s.kind === 'unresolved') return { unresolved: `${s.name ?? 'attribute'}: ${s.reason ?? 'unresolved'}` };
    if (!contextAsset) return { unresolved: `${s.name}: no context asset (open the display from an asset)` };
    if (s.name.includes('|')) return { ...await resolveRelativePath(s.name, contextAsset, label, holder.limits), pen, continuity };
    let answer = byName.get(s.name);
    if (!answer) {
      answer = post<ResolveAnswer>('/v1/model/resolve', {
        select: { kind: 'attributes_named', content: { name: s.name } }, scope: { under: { kind: 'asset_id', content: contextAsset } },
      }).catch(() => null);
      byName.set(s.name, answer);
    }
    const a = (await answer)?.results.find((r) => r.asset_id === contextAsset);
    if (!a) return { unresolved: `${s.name}: the context asset has no attribute of that name` };
    return { attributeId: a.attribute_id, label: label ?? a.name, limits: holder.limits ?? a.limit_traits, pen, continuity };
  }));
}

const assetPaths = new Map<string, Promise<string>>();

/** `Motor/Bearing|Temperature`: an attribute of an asset under the context asset, by path. */
async function resolveRelativePath(name: string, contextAsset: string, label: string | null, limits: unknown): Promise<Resolution> {
  let base = assetPaths.get(contextAsset);
  if (!base) {
    base = get<{ path: string | null }>(`/v1/model/assets/${contextAsset}`).then((a) => a.path ?? '');
    assetPaths.set(contextAsset, base);
  }
  try {
    const path = `${await base}/${name}`;
    const a = await get<ResolvedAttribute>(`/v1/model/resolve-path?path=${encodeURIComponent(path)}`);
    return { attributeId: a.attribute_id, label: label ?? a.path, limits: limits ?? a.limit_traits };
  } catch (e) {
    return { unresolved: `${name}: ${e instanceof Error ? e.message : String(e)}` };
  }
}
