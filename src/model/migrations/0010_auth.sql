-- Authentication and authorization: principals (people and service identities),
-- sessions, service tokens, roles and grants. Secrets are never stored: a password is
-- stored as a self-describing scrypt hash, a session cookie and a service token as the
-- SHA-256 of their random secret part (both carry >= 256 random bits, so a fast hash
-- is enough; see docs/decisions.md).

CREATE TABLE auth_principal (
  principal_id   uuid    PRIMARY KEY,
  -- 'user' for people (local or OIDC); service identities use their kind
  -- ('integration', 'collector').
  kind           text    NOT NULL,
  subject        text    NOT NULL,
  display        text    NOT NULL DEFAULT '',
  disabled       boolean NOT NULL DEFAULT false,
  -- scrypt$<log2 N>$<r>$<p>$<salt b64>$<hash b64>; NULL for OIDC people and services.
  password_hash  text,
  oidc_issuer    text,
  oidc_subject   text,
  valid_from_ns  bigint  NOT NULL,
  valid_to_ns    bigint,
  tx_id          bigint  NOT NULL
);
-- People and services have separate name spaces: a collector's identity name must
-- equal its collector_id, whatever usernames exist.
CREATE UNIQUE INDEX auth_principal_username ON auth_principal (lower(subject)) WHERE kind = 'user';
CREATE UNIQUE INDEX auth_principal_service_name ON auth_principal (subject) WHERE kind <> 'user';
CREATE UNIQUE INDEX auth_principal_oidc ON auth_principal (oidc_issuer, oidc_subject) WHERE oidc_issuer IS NOT NULL;

CREATE TABLE auth_session (
  session_id     uuid    PRIMARY KEY,
  principal_id   uuid    NOT NULL REFERENCES auth_principal (principal_id),
  secret_hash    bytea   NOT NULL,
  method         text    NOT NULL,
  remote_address text    NOT NULL DEFAULT '',
  user_agent     text    NOT NULL DEFAULT '',
  created_ns     bigint  NOT NULL,
  last_seen_ns   bigint  NOT NULL,
  expires_ns     bigint  NOT NULL,
  revoked_ns     bigint,
  revoked_by     text
);
CREATE INDEX auth_session_principal ON auth_session (principal_id, created_ns);
CREATE INDEX auth_session_listing ON auth_session (created_ns, session_id);

CREATE TABLE auth_service_token (
  token_id       uuid    PRIMARY KEY,
  principal_id   uuid    NOT NULL REFERENCES auth_principal (principal_id),
  secret_hash    bytea   NOT NULL,
  comment        text    NOT NULL DEFAULT '',
  created_ns     bigint  NOT NULL,
  expires_ns     bigint,
  revoked_ns     bigint,
  tx_id          bigint  NOT NULL
);
CREATE INDEX auth_service_token_principal ON auth_service_token (principal_id, created_ns);

CREATE TABLE auth_role (
  role_id        uuid    PRIMARY KEY,
  name           text    NOT NULL,
  description    text    NOT NULL DEFAULT '',
  capabilities   jsonb   NOT NULL,
  builtin        boolean NOT NULL DEFAULT false,
  retired        boolean NOT NULL DEFAULT false,
  version        bigint  NOT NULL DEFAULT 1,
  tx_id          bigint  NOT NULL
);
CREATE UNIQUE INDEX auth_role_name ON auth_role (lower(name));

CREATE TABLE auth_grant (
  grant_id       uuid    PRIMARY KEY,
  principal_id   uuid    NOT NULL REFERENCES auth_principal (principal_id),
  role_id        uuid    NOT NULL REFERENCES auth_role (role_id),
  scope_kind     text    NOT NULL,
  scope_id       uuid,
  created_ns     bigint  NOT NULL,
  tx_id          bigint  NOT NULL,
  CONSTRAINT auth_grant_scope CHECK (
    (scope_kind = 'everywhere' AND scope_id IS NULL) OR (scope_kind IN ('asset', 'view') AND scope_id IS NOT NULL))
);
CREATE INDEX auth_grant_principal ON auth_grant (principal_id);
CREATE UNIQUE INDEX auth_grant_unique ON auth_grant (principal_id, role_id, scope_kind, coalesce(scope_id, '00000000-0000-0000-0000-000000000000'::uuid));

-- The built-in roles (docs/decisions.md has the mapping and why). tx_id 0: they
-- predate every model transaction.
INSERT INTO auth_role (role_id, name, description, capabilities, builtin, tx_id) VALUES
  ('00000000-0000-4000-a000-000000000001', 'viewer', 'Reads data, the model and displays.',
   '["read"]', true, 0),
  ('00000000-0000-4000-a000-000000000002', 'operator', 'Runs the plant: reads, annotates, enters manual values, manages episodes.',
   '["read","annotate","enter","episode-manage"]', true, 0),
  ('00000000-0000-4000-a000-000000000003', 'engineer', 'Builds the model, calculations and displays; approves and amends data.',
   '["read","annotate","enter","approve","amend","model-edit","registry-manage","calc-author","display-author","display-publish","episode-manage"]', true, 0),
  ('00000000-0000-4000-a000-000000000004', 'administrator', 'Every capability, including redaction and administration.',
   '["read","annotate","enter","approve","amend","model-edit","registry-manage","calc-author","display-author","display-publish","episode-manage","redact","admin"]', true, 0);
