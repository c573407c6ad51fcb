// The portal speaks only the public REST contract, with the session cookie the login set
// (same-origin fetches carry it; the service's Fetch Metadata check lets them through).
// Times travel as int64 ns: bodies are written with bigint members as exact digits, and
// answers parse with JSON.parse, which rounds ns near today to ~256 ns: more than enough
// to draw, never used to write.

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) { super(message); }
}

/** JSON text with bigint members written as bare digits (the service's int64 convention). */
export function stringifyBody(body: unknown): string {
  return JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? `\u0000${v}\u0000` : v)).replace(/"\\u0000(-?\d+)\\u0000"/g, '$1');
}

export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.body = stringifyBody(body);
    init.headers = { accept: 'application/json', 'content-type': 'application/json' };
  }
  const res = await fetch(path, init);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let json: unknown = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  if (!res.ok) {
    const env = (json ?? {}) as { code?: string; error?: string; message?: string };
    throw new ApiError(res.status, env.code ?? 'http-' + res.status, env.error ?? env.message ?? `${method} ${path}: ${res.status}`);
  }
  return json as T;
}

export const get = <T>(path: string) => call<T>('GET', path);
export const post = <T>(path: string, body: unknown) => call<T>('POST', path, body);

/** Whether an error says the operation is not offered by this service (a route not built yet). */
export const isMissingRoute = (e: unknown) => e instanceof ApiError && e.code === 'route-not-found';
export const isUnauthenticated = (e: unknown) => e instanceof ApiError && e.status === 401;

// ---- Shapes of the answers the portal reads (the contract's, narrowed to what it draws) ----

export interface TreeNode { asset_id: string; name: string; path: string; template_id: string | null; retired: boolean; children: TreeNode[] }
export interface ResolvedAttribute { attribute_id: string; asset_id: string; name: string; path: string; asset_path: string; limit_traits: unknown; display_unit_id: string | null; continuity_class: string }
export interface ResolveAnswer { results: ResolvedAttribute[] }
export interface BandRender { t_ms: number[]; v_min: Array<number | null>; v_max: Array<number | null>; percent_good: number; points_scanned: number }
export interface RenderItem { attribute_id: string; path: string; unit_id: string | null; render: BandRender | null }
export interface ReadPoint { ts_ns: number; value: unknown; quality: number }
export interface SnapshotItem { attribute_id: string; path: string; snapshot: ReadPoint | null }
export interface SummaryItem { attribute_id: string; path: string; intervals: Array<{ start_ns: number; end_ns: number; min?: number | null; max?: number | null; twa?: number | null; last?: number | null; mean?: number | null; count?: number }> }
