// Small clients for the Model routes used by test/model/*: each call is a real HTTP
// request against a service started with startTestService.
import { request, type HttpResult } from './service.js';

export interface ModelClient {
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResult>;
  /** Calls and returns the JSON body, failing loudly on an unexpected status. */
  ok<T = Record<string, unknown>>(method: string, path: string, body?: unknown, status?: number): Promise<T>;
}

export function modelClient(url: string, headers: Record<string, string> = {}): ModelClient {
  const call = (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) =>
    request(url + path, { method, body, headers: { ...headers, ...extra } });
  return {
    call,
    async ok<T>(method: string, path: string, body?: unknown, status = 200): Promise<T> {
      const r = await call(method, path, body);
      if (r.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${r.status}: ${r.text}`);
      return r.json as T;
    },
  };
}

/** Waits a little so that the next commit has a strictly later committed_ns than an instant taken now. */
export const tick = () => new Promise((r) => setTimeout(r, 5));
