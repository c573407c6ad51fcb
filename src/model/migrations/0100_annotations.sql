-- Annotations (issue 29): notes on attributes, an asset or an episode, at an instant or over
-- a range, versioned (every change a model transaction), redactable, with attachments.
--
-- annotation holds the current version (what queries read); annotation_version every
-- version's content for GET .../versions. Redaction overwrites `text` and every version's
-- `content` with NULL and deletes the attachment rows' bytes' file: the fact, the time, who
-- and why stay.
CREATE TABLE annotation (
  annotation_id    uuid    PRIMARY KEY,
  version          integer NOT NULL,
  target_kind      text    NOT NULL CHECK (target_kind IN ('attributes', 'asset', 'episode')),
  -- attribute ids, or the one asset id, or the one episode id
  target_ids       uuid[]  NOT NULL,
  -- the assets whose `read` scope governs who may read it (the attributes' assets, the
  -- asset, the episode's assets)
  scope_asset_ids  uuid[]  NOT NULL,
  start_ns         bigint  NOT NULL,
  -- inclusive; equal to start_ns for an instant
  end_ns           bigint  NOT NULL,
  text             text,
  -- annotation-tags registry entry ids
  tag_ids          uuid[]  NOT NULL DEFAULT '{}',
  author           text    NOT NULL,
  author_id        text    NOT NULL,
  created_ns       bigint  NOT NULL,
  updated_ns       bigint  NOT NULL,
  updated_by       text    NOT NULL,
  tx_id            bigint  NOT NULL REFERENCES model_tx (tx_id),
  redacted_ns      bigint,
  redacted_by      text,
  redaction_reason text,
  -- full-text search over the text (english stemming), written with the text
  search           tsvector,
  CONSTRAINT annotation_range CHECK (end_ns >= start_ns)
);
CREATE INDEX annotation_author ON annotation (author, start_ns, annotation_id);
CREATE INDEX annotation_start ON annotation (start_ns, annotation_id);
CREATE INDEX annotation_tags ON annotation USING gin (tag_ids);
CREATE INDEX annotation_search ON annotation USING gin (search);

-- One row per target of the current version, for the time-overlap queries. An annotation
-- overlaps a window [ws, we) when start_ns < we and end_ns >= ws; a btree on start_ns alone
-- must scan every earlier start to find long ranges that began before the window. Rows are
-- therefore grouped by span_class, the bit length of (end_ns - start_ns): in class c every
-- range is shorter than 2^c, so its start lies in (ws - 2^c, we) and each class is one short
-- index range scan (docs/decisions.md, annotations).
CREATE TABLE annotation_target (
  target_id     uuid     NOT NULL,
  span_class    smallint NOT NULL,
  start_ns      bigint   NOT NULL,
  annotation_id uuid     NOT NULL REFERENCES annotation (annotation_id) ON DELETE CASCADE,
  end_ns        bigint   NOT NULL,
  -- the asset of an attribute target, the asset target itself; NULL for an episode
  asset_id      uuid,
  PRIMARY KEY (target_id, span_class, start_ns, annotation_id)
);
CREATE INDEX annotation_target_asset ON annotation_target (asset_id, span_class, start_ns) WHERE asset_id IS NOT NULL;
CREATE INDEX annotation_target_annotation ON annotation_target (annotation_id);
-- The span classes in use (at most 64 rows), so a query probes only those.
CREATE TABLE annotation_span_class (span_class smallint PRIMARY KEY);

CREATE TABLE annotation_version (
  annotation_id uuid    NOT NULL REFERENCES annotation (annotation_id) ON DELETE CASCADE,
  version       integer NOT NULL,
  tx_id         bigint  NOT NULL REFERENCES model_tx (tx_id),
  principal     text    NOT NULL,
  committed_ns  bigint  NOT NULL,
  reason        text    NOT NULL DEFAULT '',
  -- {target, start_ns, end_ns, text, tags, attachment_ids}; NULL once redacted
  content       jsonb,
  PRIMARY KEY (annotation_id, version)
);

-- Uploaded attachments. The bytes live in the attachment store under the data directory,
-- content-addressed by SHA-256 (attachments/<2 hex>/<64 hex>); an upload is its own row.
CREATE TABLE annotation_attachment (
  attachment_id   uuid   PRIMARY KEY,
  sha256          text   NOT NULL,
  content_type    text   NOT NULL,
  size_bytes      bigint NOT NULL,
  filename        text,
  uploaded_by     text   NOT NULL,
  uploaded_by_id  text   NOT NULL,
  uploaded_ns     bigint NOT NULL,
  redacted_ns     bigint
);
CREATE INDEX annotation_attachment_sha ON annotation_attachment (sha256);

-- The attachments the current version of each annotation uses.
CREATE TABLE annotation_uses_attachment (
  attachment_id uuid NOT NULL REFERENCES annotation_attachment (attachment_id),
  annotation_id uuid NOT NULL REFERENCES annotation (annotation_id) ON DELETE CASCADE,
  PRIMARY KEY (attachment_id, annotation_id)
);
CREATE INDEX annotation_uses_attachment_annotation ON annotation_uses_attachment (annotation_id);
