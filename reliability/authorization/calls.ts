// How the authorization matrix calls an operation: a concrete path whose parameters pass
// validation (so a 401/403 is not masked by a 400), and the status alone, read without
// waiting for the body (an allowed subscription streams forever).
import { randomUUID } from 'node:crypto';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import type { AnyRoute } from '../../src/http/route.js';

export const METHOD = { get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE' } as const;

/** Fills path parameters with values their schema accepts; `scopeValue` goes to the route's scope parameter. */
export function concretePath(route: AnyRoute, scopeValue?: string): string {
  const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  const scopeParam = route.access.kind === 'capability' ? route.access.scopeParam ?? 'uuid' : 'uuid';
  const id = randomUUID();
  const props = (route.params as { properties?: Record<string, TSchema> } | undefined)?.properties ?? {};
  const check = route.params ? TypeCompiler.Compile(route.params as TSchema) : null;
  const values: Record<string, string> = {};
  for (const n of names) values[n] = scopeValue !== undefined && n === scopeParam ? scopeValue : id;
  if (check) {
    for (const n of names) {
      if (scopeValue !== undefined && n === scopeParam) continue;
      // A uuid fits most; enums (a registry kind) get their first member from Value.Create.
      let created: unknown;
      try { created = props[n] ? Value.Create(props[n]) : undefined; } catch { created = undefined; } // formats without a default
      const candidates = [id, ...(typeof created === 'string' && created !== '' ? [created] : []), `test:${id}`, 'x', '1'];
      for (const c of candidates) {
        values[n] = c;
        if (check.Check({ ...values })) break;
      }
    }
  }
  return route.path.replace(/\{([^}]+)\}/g, (_m, n: string) => encodeURIComponent(values[n]));
}

/** The status of one call, without waiting for the body. */
export async function statusOf(url: string, method: string, body: unknown, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, {
    method, redirect: 'manual',
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  await res.body?.cancel();
  return res.status;
}
