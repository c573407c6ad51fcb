// The seam between the HTTP pipeline and authentication/authorization. The pipeline
// asks an AccessControl who is calling and whether a capability holds on a target; the
// implementation (sessions, tokens, roles, grants, postures) lives in src/auth.
import type { Capability } from './capabilities.js';
import type { AuthMode } from '../config/config.js';

export type { AuthMode };

export interface Principal {
  /** principal_id (uuid); the built-in local administrator of disabled mode has its own fixed id. */
  id: string;
  kind: string;
  /** Username for people, identity name for services. */
  subject: string;
  display: string;
  /** How this request was authenticated. */
  via: 'session' | 'bearer' | 'disabled-mode';
  /** Session id or token id behind the request, when there is one. */
  credentialId?: string;
  sessionExpiresNs?: bigint;
}

/** What a capability is checked against. */
export type AccessTarget =
  | { kind: 'anywhere' }
  | { kind: 'global' }
  | { kind: 'asset'; id: string }
  | { kind: 'view'; id: string }
  | { kind: 'staging' }
  | { kind: 'owner'; principal: string };

/** Credentials copied out of a request. */
export interface RequestCredentials {
  authorization: string | undefined;
  cookie: string | undefined;
  remoteAddress: string;
  /** The request's correlation id, so refusals can be found in the log (optional: the ingest worker has none). */
  correlationId?: string;
}

export interface AccessControl {
  readonly mode: AuthMode;
  /** The principal behind the credentials, null when none were sent; throws ServiceError('unauthenticated') for bad ones. */
  authenticate(creds: RequestCredentials): Promise<Principal | null>;
  /** Whether the principal holds the capability on the target. Unknown capabilities never grant. */
  allows(principal: Principal, capability: Capability, target: AccessTarget): Promise<boolean>;
  /** Whether the principal holds the capability on any scope at all. */
  holdsAnywhere(principal: Principal, capability: Capability): Promise<boolean>;
  /** Moved by every auth change this process commits (grants, roles, principals): what a principal may read is then unsure. */
  readonly generation: number;
}
