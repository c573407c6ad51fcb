-- Displays (issue 30): folders and versioned display documents, rows in the model
-- database written in model transactions (tx_id) like the asset model.
--
-- Folders are kept as history (tx_from/tx_to, as the asset model): a rename or a move
-- ends the current row and starts a new one. Names are unique among current siblings.
CREATE TABLE display_folder_version (
  folder_id uuid   NOT NULL,
  parent_id uuid,
  name      text   NOT NULL,
  tx_from   bigint NOT NULL REFERENCES model_tx (tx_id),
  tx_to     bigint,
  PRIMARY KEY (folder_id, tx_from)
);
CREATE UNIQUE INDEX display_folder_current ON display_folder_version (folder_id) WHERE tx_to IS NULL;
CREATE UNIQUE INDEX display_folder_sibling_name ON display_folder_version
  (COALESCE(parent_id, '00000000-0000-0000-0000-000000000000'::uuid), name) WHERE tx_to IS NULL;

-- A display's versions are append-only: version n is the document as the n-th write left
-- it. `document` is json, not jsonb: json keeps the text as written (member order, the
-- digits of every number), so an `x` bag comes back as it was sent.
CREATE TABLE display_version (
  display_id     uuid    NOT NULL,
  version        integer NOT NULL,
  folder_id      uuid    NOT NULL,
  name           text    NOT NULL,
  kind           text    NOT NULL,
  schema_version text    NOT NULL,
  document       json    NOT NULL,
  author         text    NOT NULL,
  committed_ns   bigint  NOT NULL,
  tx_id          bigint  NOT NULL REFERENCES model_tx (tx_id),
  PRIMARY KEY (display_id, version)
);

-- The head of each display: its newest version and the version readers without
-- display-author see (NULL: not published, invisible to them).
CREATE TABLE display_head (
  display_id        uuid    PRIMARY KEY,
  current_version   integer NOT NULL,
  folder_id         uuid    NOT NULL,
  kind              text    NOT NULL,
  published_version integer,
  published_folder  uuid,
  published_kind    text,
  published_tx      bigint
);
CREATE INDEX display_head_folder ON display_head (folder_id, display_id);
CREATE INDEX display_head_published_folder ON display_head (published_folder, display_id) WHERE published_version IS NOT NULL;
