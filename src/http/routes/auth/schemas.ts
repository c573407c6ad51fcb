// Request and response shapes of the Authentication area. Every object is closed
// (additionalProperties: false): unknown fields are rejected with their name.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Int64, Uuid, Nullable, Limit, CapabilitySchema } from '../../schemas/common.js';

const closed = { additionalProperties: false } as const;
const Reason = Type.Optional(Type.String({ maxLength: 1000, description: 'Why the change is made; recorded with the model transaction' }));

export const AuthMethods = Type.Object({
  auth_mode: Type.Union([Type.Literal('disabled'), Type.Literal('shadow'), Type.Literal('enforced')]),
  login_methods: Type.Array(Type.Union([Type.Literal('local'), Type.Literal('oidc')])),
}, { $id: 'AuthMethods', ...closed });

export const LocalLoginBody = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 128 }),
  password: Type.String({ minLength: 1, maxLength: 1024, format: 'password', writeOnly: true }),
}, closed);
export type LocalLoginBody = Static<typeof LocalLoginBody>;

export const OidcCallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 4096 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  error: Type.Optional(Type.String({ maxLength: 256 })),
  error_description: Type.Optional(Type.String({ maxLength: 2048 })),
  iss: Type.Optional(Type.String({ maxLength: 2048 })),
  session_state: Type.Optional(Type.String({ maxLength: 2048 })),
}, closed);

export const Principal = Type.Object({
  principal_id: Uuid(),
  kind: Type.String({ description: '`user` for people; a service identity kind (`integration`, `collector`) for services' }),
  subject: Type.String({ description: 'Username, or the service identity name' }),
  display: Type.String(),
  disabled: Type.Boolean(),
  valid_from_ns: Int64(),
  valid_to_ns: Nullable(Int64()),
  tx_id: Int64(),
}, { $id: 'Principal', ...closed });

export const CreatePrincipalBody = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._@-]*$', 'x-expected': 'a username of 1 to 128 characters: letters, digits, `.`, `_`, `@` and `-`, starting with a letter or digit' }),
  password: Type.String({ minLength: 12, maxLength: 1024, format: 'password', writeOnly: true, description: 'At least 12 characters' }),
  display: Type.Optional(Type.String({ maxLength: 256 })),
  reason: Reason,
}, closed);
export type CreatePrincipalBody = Static<typeof CreatePrincipalBody>;

export const ChangePasswordBody = Type.Object({
  current_password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, format: 'password', writeOnly: true, description: 'Your current password: required to change your own; an administrator setting another person\'s password leaves it out' })),
  new_password: Type.String({ minLength: 12, maxLength: 1024, format: 'password', writeOnly: true, description: 'At least 12 characters' }),
  reason: Reason,
}, closed);
export type ChangePasswordBody = Static<typeof ChangePasswordBody>;

export const PrincipalStateBody = Type.Object({ reason: Reason }, closed);

export const PageQuery = Type.Object({
  limit: Type.Optional(Limit(1000)),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
}, closed);

const page = <T extends TSchema>(item: T, id: string) =>
  Type.Object({ items: Type.Array(item), next_cursor: Nullable(Type.String()) }, { $id: id, ...closed });

export const PrincipalPage = page(Principal, 'PrincipalPage');

export const Session = Type.Object({
  session_id: Uuid(),
  principal_id: Uuid(),
  subject: Type.String(),
  method: Type.Union([Type.Literal('local'), Type.Literal('oidc')]),
  remote_address: Type.String(),
  user_agent: Type.String(),
  created_ns: Int64(),
  last_seen_ns: Int64(),
  expires_ns: Int64({ description: 'When the session ends if unused: the earlier of idle and absolute expiry' }),
  current: Type.Boolean({ description: 'The session this request was authenticated with' }),
}, { $id: 'Session', ...closed });
export const SessionPage = page(Session, 'SessionPage');

export const SessionsQuery = Type.Object({
  all: Type.Optional(Type.Boolean({ description: 'Every principal\'s sessions; needs `admin`' })),
  limit: Type.Optional(Limit(1000)),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
}, closed);

export const IdParams = Type.Object({ id: Uuid() }, closed);
export const TokenIdParams = Type.Object({ token_id: Uuid() }, closed);

export const ServiceToken = Type.Object({
  token_id: Uuid(),
  identity_id: Uuid(),
  comment: Type.String(),
  created_ns: Int64(),
  expires_at_ns: Nullable(Int64()),
  revoked_ns: Nullable(Int64()),
  tx_id: Int64(),
}, { $id: 'ServiceToken', ...closed });

export const MintedServiceToken = Type.Object({
  ...ServiceToken.properties,
  token: Type.String({ description: 'The plaintext bearer token. Shown only in this response; only a hash is stored.' }),
}, { $id: 'MintedServiceToken', ...closed });

export const ServiceIdentity = Type.Object({
  identity_id: Uuid({ description: 'Also its principal_id (grants name it)' }),
  kind: Type.String(),
  name: Type.String(),
  display: Type.String(),
  disabled: Type.Boolean(),
  valid_from_ns: Int64(),
  tx_id: Int64(),
  tokens: Type.Array(ServiceToken, { description: 'Token metadata; never the secrets' }),
}, { $id: 'ServiceIdentity', ...closed });
export const ServiceIdentityPage = page(ServiceIdentity, 'ServiceIdentityPage');

export const CreateServiceIdentityBody = Type.Object({
  kind: Type.Union([Type.Literal('integration'), Type.Literal('collector')]),
  name: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$', description: 'For a collector: its collector_id', 'x-expected': 'a name of 1 to 128 characters: letters, digits, `.`, `_`, `:` and `-`, starting with a letter or digit' }),
  display: Type.Optional(Type.String({ maxLength: 256 })),
  reason: Reason,
}, closed);

export const MintTokenBody = Type.Object({
  expires_at_ns: Type.Optional(Nullable(Int64({ minimum: 1 }))),
  comment: Type.Optional(Type.String({ maxLength: 500 })),
  reason: Reason,
}, closed);

export const RevokeBody = Type.Object({ reason: Reason }, closed);

export const Role = Type.Object({
  role_id: Uuid(),
  name: Type.String(),
  description: Type.String(),
  capabilities: Type.Array(CapabilitySchema),
  builtin: Type.Boolean(),
  retired: Type.Boolean(),
  version: Int64(),
  tx_id: Int64(),
}, { $id: 'Role', ...closed });
export const RolePage = page(Role, 'RolePage');

const RoleName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9 ._-]*$', 'x-expected': 'a role name of 1 to 64 characters: letters, digits, spaces, `.`, `_` and `-`, starting with a letter or digit' });
const CapabilityList = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 64, description: 'Capability enum values; an unknown value is rejected' });

export const CreateRoleBody = Type.Object({
  name: RoleName,
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  capabilities: CapabilityList,
  reason: Reason,
}, closed);

export const UpdateRoleBody = Type.Object({
  name: Type.Optional(RoleName),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  capabilities: Type.Optional(CapabilityList),
  retired: Type.Optional(Type.Boolean({ description: 'true retires the role (its grants stop granting); false restores it' })),
  reason: Reason,
}, closed);

export const GrantScope = Type.Union([
  Type.Object({ kind: Type.Literal('everywhere') }, closed),
  Type.Object({ kind: Type.Literal('asset'), asset_id: Uuid({ description: 'The root of the asset subtree' }) }, closed),
  Type.Object({ kind: Type.Literal('view'), view_id: Uuid() }, closed),
], { $id: 'GrantScope' });

export const Grant = Type.Object({
  grant_id: Uuid(),
  principal_id: Uuid(),
  role_id: Uuid(),
  role_name: Type.String(),
  scope: GrantScope,
  created_ns: Int64(),
  tx_id: Int64(),
}, { $id: 'Grant', ...closed });
export const GrantPage = page(Grant, 'GrantPage');

export const GrantsQuery = Type.Object({
  principal_id: Type.Optional(Uuid()),
  role_id: Type.Optional(Uuid()),
  limit: Type.Optional(Limit(1000)),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
}, closed);

export const CreateGrantBody = Type.Object({
  principal_id: Uuid(),
  role_id: Type.String({ minLength: 1, maxLength: 200, description: "The role's uuid, or its name: viewer, operator, engineer, administrator, or a custom role's name (names match ignoring case)" }),
  scope: GrantScope,
  reason: Reason,
}, closed);

export const EffectiveTarget = Type.Union([
  Type.Object({ kind: Type.Literal('everywhere') }, closed),
  Type.Object({ kind: Type.Literal('anywhere') }, closed),
  Type.Object({ kind: Type.Literal('asset'), asset_id: Uuid() }, closed),
  Type.Object({ kind: Type.Literal('view'), view_id: Uuid() }, closed),
], { $id: 'EffectiveTarget' });

export const EffectiveBody = Type.Object({
  principal_id: Type.Optional(Uuid({ description: 'Defaults to the caller; another principal needs `admin`' })),
  target: EffectiveTarget,
  capability: Type.Optional(Type.String({ maxLength: 64, description: 'Also answer yes or no for this one; an unknown string is never allowed' })),
}, closed);

export const Effective = Type.Object({
  principal_id: Uuid(),
  target: EffectiveTarget,
  capabilities: Type.Array(CapabilitySchema),
  capability: Type.Optional(Type.String()),
  allowed: Type.Optional(Type.Boolean()),
}, { $id: 'Effective', ...closed });

export const WhoAmI = Type.Object({
  principal: Type.Object({
    principal_id: Uuid(),
    kind: Type.String(),
    subject: Type.String(),
    display: Type.String(),
  }, closed),
  authenticated_via: Type.Union([Type.Literal('session'), Type.Literal('bearer'), Type.Literal('disabled-mode')]),
  auth_mode: Type.Union([Type.Literal('disabled'), Type.Literal('shadow'), Type.Literal('enforced')]),
  roles: Type.Array(Type.Object({ grant_id: Uuid(), role_id: Uuid(), name: Type.String(), retired: Type.Boolean(), scope: GrantScope }, closed)),
  capabilities: Type.Array(CapabilitySchema, { description: 'Held on at least one scope' }),
  authorization: Type.Object({
    everywhere: Type.Array(CapabilitySchema, { description: 'Held on the whole model' }),
    assets: Type.Array(Type.Object({ asset_id: Uuid(), capabilities: Type.Array(CapabilitySchema) }, closed), { description: 'Asset subtrees with their capabilities' }),
    views: Type.Array(Type.Object({ view_id: Uuid(), capabilities: Type.Array(CapabilitySchema) }, closed)),
  }, closed),
  session_expires_ns: Nullable(Int64()),
}, { $id: 'WhoAmI', ...closed });
