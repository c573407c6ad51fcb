// Who may do what with an annotation. Reading needs `read` on every asset that scopes it
// (the assets of its attributes, its asset, its episode's assets; an episode note with no
// asset needs `read` on the whole model): a note on two pumps is shown only to those who may
// read both. Writing needs `annotate`, redaction `redact`, on the same assets.
import type { HandlerContext } from '../../route.js';
import type { Capability } from '../../../auth/capabilities.js';
import type { Actor, AnnotationView } from '../../../annotations/annotation-store.js';

export function actorOf(ctx: HandlerContext, reason: string | undefined): Actor {
  return { principal: ctx.principal?.subject ?? 'anonymous', principalId: ctx.principal?.id ?? 'anonymous', reason: reason ?? '' };
}

/** Throws 403 unless the capability holds on every scope asset (or the whole model when there is none). */
export async function authorizeOnScope(ctx: HandlerContext, capability: Capability, scopeAssets: string[]): Promise<void> {
  if (scopeAssets.length === 0) { await ctx.authorize(capability, { kind: 'global' }); return; }
  for (const id of scopeAssets) await ctx.authorize(capability, { kind: 'asset', id });
}

/** A memoised "may read this annotation" for one request. */
export function annotationReader(ctx: HandlerContext): (v: Pick<AnnotationView, 'scopeAssets'>) => Promise<boolean> {
  const seen = new Map<string, boolean>();
  let global: boolean | null = null;
  const asset = async (id: string) => {
    let ok = seen.get(id);
    if (ok === undefined) { ok = await ctx.can('read', { kind: 'asset', id }); seen.set(id, ok); }
    return ok;
  };
  return async (v) => {
    if (v.scopeAssets.length === 0) return (global ??= await ctx.can('read', { kind: 'global' }));
    for (const id of v.scopeAssets) if (!(await asset(id))) return false;
    return true;
  };
}

/** The view as the routes answer it (without who may read it). */
export function annotationBody(v: AnnotationView): Omit<AnnotationView, 'scopeAssets'> {
  const { scopeAssets: _scope, ...body } = v;
  return body;
}
