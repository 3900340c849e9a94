/** Data sources: sources, snapshots, fetch state, attempts, grants, manual rows. */

/** A data source (issue 17): a provider and its config; secrets inside `config` are sealed. */
export interface DataSourcesTable {
  id: string;
  name: string;
  provider: string;
  /** JSON config; every secret value (the provider's secretPaths) is {"$sealed": "v1...."}. */
  config: string;
  /** JSON [{name, type}]: the manual table's declared columns, or the last snapshot's. */
  columns: string;
  /** null for providers that do not refresh (manual table). */
  refresh_interval_sec: number | null;
  time_zone: string;
  /** Bumped on every change people make (If-Match); a refresh does not bump it. */
  revision: number;
  created_by: string | null;
  updated_by: string | null;
  created_at: string;
  updated_at: string;
}

/** The current data of a source: what outputs are built from. */
export interface DataSourceSnapshotsTable {
  source_id: string;
  /** Bumped when the data changes (a fetch that changes nothing keeps it). */
  revision: number;
  /** sha256 of the canonical JSON of {columns, rows}. */
  sha256: string;
  columns: string;
  rows: string;
  row_count: number;
  size_bytes: number;
  warnings: string;
  fetched_at: string;
}

/** What the last successful fetch left for a conditional GET, and the refresh schedule. */
export interface DataSourceFetchStateTable {
  source_id: string;
  etag: string | null;
  last_modified: string | null;
  body_sha256: string | null;
  /** null: not scheduled (manual tables). */
  next_fetch_at: string | null;
  consecutive_failures: number;
  last_attempt_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  last_error_code: string | null;
}

/** The last fetch attempts of a source (bounded per source), for diagnostics. */
export interface DataSourceAttemptsTable {
  /** UUIDv7: sorts by time. */
  id: string;
  source_id: string;
  at: string;
  url: string;
  outcome: 'data' | 'unchanged' | 'failed';
  status: number | null;
  bytes: number;
  latency_ms: number;
  error: string | null;
  error_code: string | null;
}

export type DataSourceAccessLevel = 'viewer' | 'editor' | 'owner';

export interface DataSourceGrantsTable {
  source_id: string;
  user_id: string;
  level: DataSourceAccessLevel;
  granted_by: string | null;
  created_at: string;
  updated_at: string;
}

/** A manual table's rows, in order; `values` is a JSON object of cells. */
/** A manual table's row = its record (migration 0340 added the workflow columns). */
export interface DataSourceRowsTable {
  id: string;
  source_id: string;
  position: number;
  values: string;
  created_at: string;
  updated_at: string;
  /** Workflow state; 'published' records inside their window are live. */
  state: string;
  revision: number;
  form_version: number | null;
  publish_at: string | null;
  unpublish_at: string | null;
  /** 1 when the outputs show it (published, inside its window). */
  live: number;
  state_changed_at: string | null;
  created_by: string | null;
  updated_by: string | null;
  created_by_token: string | null;
  updated_by_token: string | null;
}

/** A record's audit trail (and its comments): kept after the record is deleted. */
export interface DataSourceRecordEventsTable {
  id: string;
  source_id: string;
  record_id: string;
  /** 1, 2, ... per record. */
  seq: number;
  /** created, updated, deleted, transition, approval, comment, attachment_added, attachment_removed, scheduled */
  kind: string;
  user_id: string | null;
  token_id: string | null;
  /** JSON: what changed ({changes: {key: {from, to}}}, {transition, from, to, comment}, {body, mentions}, ...). */
  data: string;
  at: string;
}

export interface DataSourceRecordApprovalsTable {
  record_id: string;
  transition: string;
  user_id: string;
  comment: string | null;
  at: string;
}

export interface DataSourceRecordAttachmentsTable {
  id: string;
  source_id: string;
  record_id: string;
  file_name: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  storage_key: string;
  created_by: string | null;
  created_by_token: string | null;
  created_at: string;
}

export interface IdempotencyKeysTable {
  /** 'user:<id>' or 'token:<id>' */
  principal: string;
  key: string;
  method: string;
  path: string;
  request_sha256: string;
  /** null while the first request is still running. */
  status: number | null;
  body: string | null;
  created_at: string;
}

/** An output document's bytes, content-addressed (issue 17 outputs). */
export interface DataOutputBlobsTable {
  sha256: string;
  bytes: Buffer;
  size_bytes: number;
  created_at: string;
}

/** A (source, view) pair screens use; view_key '' is the whole source, `view` its JSON (null then). */
export interface DataOutputKeysTable {
  source_id: string;
  view_key: string;
  view: string | null;
  created_at: string;
  /** The last manifest build that asked for it (keys nobody asks for are dropped). */
  last_used_at: string;
}

/** One built version of an output; the newest per (source, view) is current. */
export interface DataSourceOutputsTable {
  /** UUIDv7: sorts by build time. */
  id: string;
  source_id: string;
  view_key: string;
  /** The snapshot revision it was built from. */
  revision: number;
  /** sha256 of the document's bytes (the blob). */
  sha256: string;
  /** sha256 of its columns and rows alone: a rebuild that gives the same data keeps the version. */
  data_sha256: string;
  size_bytes: number;
  row_count: number;
  generated_at: string;
  /** Views with relative dates ('today', next N days): rebuilt after this (the next local midnight). */
  expires_at: string | null;
  /** JSON list of the image addresses its rows use (their assets go in the manifest's media). */
  image_urls: string;
  /** The last data revision it was found to match (a later revision whose rows the view gives the same keeps it). */
  checked_revision: number;
}

/** An image address a source's rows use, fetched once and kept as an asset. */
export interface DataSourceImagesTable {
  source_id: string;
  url: string;
  state: 'pending' | 'ready' | 'failed';
  asset_id: string | null;
  error: string | null;
  attempts: number;
  next_attempt_at: string | null;
  /** The last output build whose rows used it (unused for a week: dropped with its asset). */
  last_seen_at: string;
  created_at: string;
}

/** A manual table's form (issue 18): its draft fields and workflow; published versions are separate rows. */
export interface DataSourceFormsTable {
  source_id: string;
  description: string;
  /** JSON list of fields (fields.ts). */
  draft: string;
  /** JSON workflow definition (workflow-def.ts). */
  workflow: string;
  /** The newest published version; 0 before the first publish. */
  published_version: number;
  /** Bumped on every change to the form (If-Match). */
  revision: number;
  created_by: string | null;
  updated_by: string | null;
  created_at: string;
  updated_at: string;
}

/** A published version of a form: never changed after it is written. */
export interface DataSourceFormVersionsTable {
  source_id: string;
  version: number;
  fields: string;
  published_by: string | null;
  published_at: string;
}
