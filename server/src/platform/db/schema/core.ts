/** The installation: migrations, meta facts, settings, the job queue. */

export interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: string;
}

/** Small key/value facts about this installation (instance id, ...). */
export interface MetaTable {
  key: string;
  value: string;
}

/** The server's settings document (one row, id 1). */
export interface SettingsTable {
  id: number;
  /** JSON of the Settings object (modules/system/settings.ts). */
  data: string;
  revision: number;
  updated_at: string;
  updated_by: string | null;
}

export interface JobsTable {
  id: string;
  kind: string;
  /** JSON. */
  payload: string;
  state: 'queued' | 'running' | 'done' | 'failed';
  attempts: number;
  max_attempts: number;
  run_after: string;
  /** 0..1 while running. */
  progress: number | null;
  last_error: string | null;
  locked_at: string | null;
  /** The cluster key of the process running it (platform/cluster.ts; migration 0500). */
  locked_by: string | null;
  created_at: string;
  updated_at: string;
}

/** When each periodic task is next due across the instances (platform/cluster.ts `claimTick`; migration 0500). */
export interface PeriodicClaimsTable {
  name: string;
  due_ms: number;
  claimed_by: string;
}
