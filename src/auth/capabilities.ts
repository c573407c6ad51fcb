// The spec's Capability enum: what a role grants and what an operation requires. It sits
// in auth because roles, grants and the authorization check are made of it; the HTTP
// layer only publishes it in the contract.
export const CAPABILITIES = [
  'read', 'annotate', 'enter', 'approve', 'amend', 'model-edit', 'registry-manage',
  'calc-author', 'display-author', 'display-publish', 'episode-manage', 'redact', 'admin',
] as const;
export type Capability = (typeof CAPABILITIES)[number];
