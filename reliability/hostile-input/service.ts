// The service the hand-run harnesses start: the same starter the tests use
// (test/helpers/auth.ts: enforced auth, its bootstrap administrator, a fresh data
// directory, PGlite or DATABASE_URL), with its teardowns collected here instead of by tap.
import type { Test } from 'tap';
import { startAuthService, type AuthFixture } from '../../test/helpers/auth.js';

export interface HarnessService extends AuthFixture {
  grpcAddress: string;
  /** Runs every teardown the starter registered (service stop, data directory removal). */
  stop(): Promise<void>;
}

export async function startHarnessService(env: Record<string, string> = {}): Promise<HarnessService> {
  const teardowns: Array<() => unknown> = [];
  // The starter only registers teardowns on its test: nothing else of tap is used.
  const scope = { teardown: (fn: () => unknown) => { teardowns.push(fn); } } as unknown as Test;
  const svc = await startAuthService(scope, env, process.env.HARNESS_LOG_LEVEL);
  return {
    ...svc,
    grpcAddress: `127.0.0.1:${svc.service.context.parts.ingest.port}`,
    async stop() {
      for (const fn of teardowns.reverse()) await fn();
    },
  };
}
