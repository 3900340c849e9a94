import type Koa from 'koa';
import type { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Role } from '../../platform/http/auth.js';
import type { Db } from '../../platform/db/database.js';

/**
 * Hooks other modules register with, from their module's install() (modules/<area>/index.ts),
 * into the app's scope (deps.scope). A key registered again replaces the earlier entry. See
 * docs/architecture.md ("System hooks").
 */

// ---------------------------------------------------------------- status contributors

export interface StatusContributor {
  /** Key of the section in `GET /system/status` `sections` (e.g. `media`, `jobs`, `fleet`). */
  key: string;
  title: string;
  /** A small JSON object. Runs with a 3 s limit; a failure shows as `{ok: false, error}`. */
  collect(deps: AppDeps): Promise<Record<string, unknown>> | Record<string, unknown>;
}

export function registerStatusContributor(deps: AppDeps, contributor: StatusContributor): void {
  hooksOf(deps).status.set(contributor.key, contributor);
}

export function statusContributorList(deps: AppDeps): StatusContributor[] {
  return [...hooksOf(deps).status.values()];
}

// ---------------------------------------------------------------- maintenance actions

export interface MaintenanceContext {
  deps: AppDeps;
  /** The action's validated options (its `options` schema's output). */
  options: unknown;
  /** Reports progress: `fraction` in 0..1, and what is happening now. */
  progress(fraction: number, message: string): void;
  /** User id of the caller, or null from the CLI or a schedule. */
  requestedBy: string | null;
  /** The Koa app the request came through (null outside HTTP), for state on its context. */
  app: Koa | null;
}

export interface MaintenanceAction {
  /** The `{action}` of `POST /api/v1/system/maintenance/{action}`, kebab-case. */
  name: string;
  summary: string;
  /** Weakest console role allowed to run it (default `admin`). */
  minRole?: Role;
  /**
   * Exclusive actions (backup, restore, vacuum, anything that rewrites the database or
   * the media store) never run two at a time; a second one answers 409 `conflict`.
   */
  exclusive?: boolean;
  /** Options in the request body (`{"options": {...}}`); absent means none. */
  options?: z.ZodType;
  /** Does the work; answers a small JSON result. Throw ApiError for a clean failure. */
  run(ctx: MaintenanceContext): Promise<Record<string, unknown>>;
}

export function registerMaintenanceAction(deps: AppDeps, action: MaintenanceAction): void {
  if (!/^[a-z][a-z0-9-]{0,62}$/.test(action.name)) throw new Error(`maintenance action name must be kebab-case: ${action.name}`);
  hooksOf(deps).actions.set(action.name, action);
}

export function maintenanceAction(deps: AppDeps, name: string): MaintenanceAction | undefined {
  return hooksOf(deps).actions.get(name);
}

export function maintenanceActionList(deps: AppDeps): MaintenanceAction[] {
  return [...hooksOf(deps).actions.values()].sort((a, b) => a.name.localeCompare(b.name));
}

// ---------------------------------------------------------------- restore participants

/**
 * Work that runs outside HTTP requests and writes to the database or the media store (the
 * job queue): paused before a live restore swaps the data in, resumed after it (also when
 * it failed), so nothing it writes straddles the swap.
 */
export interface RestoreParticipant {
  key: string;
  /** Stops starting work and waits for what runs to stop. */
  pause(deps: AppDeps): Promise<void>;
  /** Picks up again on whatever data is live now. */
  resume(deps: AppDeps): Promise<void>;
}

export function registerRestoreParticipant(deps: AppDeps, participant: RestoreParticipant): void {
  hooksOf(deps).participants.set(participant.key, participant);
}

export function restoreParticipantList(deps: AppDeps): RestoreParticipant[] {
  return [...hooksOf(deps).participants.values()];
}

// ---------------------------------------------------------------- settings export sections

export interface ImportPlan {
  /** Human-readable lines: what would be created, changed, left alone. */
  changes: { action: 'create' | 'update' | 'unchanged' | 'delete'; id?: string; name?: string; detail?: string }[];
}

export interface ExportSection {
  /** Key in the export document's `sections` (e.g. `settings`, `policies`, `locations`, `groups`). */
  key: string;
  /** Version of this section's format; an import refuses a newer one. */
  version: number;
  /** Sections are applied in `order` (lower first), so locations come before groups that name them. */
  order?: number;
  /** The section's data. No secrets (hashes, keys, tokens) ever go here. */
  exportData(db: Db): Promise<unknown>;
  /** Validates `data` and answers what applying it would change, without changing anything. */
  preview(db: Db, data: unknown, version: number): Promise<ImportPlan>;
  /**
   * Applies `data` inside the given transaction (all sections share one: the import is
   * atomic). Answers what `committed` needs (e.g. the screens whose manifest changed).
   */
  apply(trx: Db, data: unknown, version: number): Promise<void | { screenIds?: string[] }>;
  /** After the whole import committed, with what `apply` answered (e.g. bump those screens' manifests). */
  committed?(deps: AppDeps, applied: void | { screenIds?: string[] }): Promise<void>;
}

export function registerExportSection(deps: AppDeps, section: ExportSection): void {
  hooksOf(deps).sections.set(section.key, section);
}

export function exportSectionList(deps: AppDeps): ExportSection[] {
  return [...hooksOf(deps).sections.values()].sort((a, b) => (a.order ?? 100) - (b.order ?? 100) || a.key.localeCompare(b.key));
}

// ---------------------------------------------------------------- the registries

const HOOKS = new ScopeKey('system.hooks', () => ({
  status: new Map<string, StatusContributor>(),
  actions: new Map<string, MaintenanceAction>(),
  participants: new Map<string, RestoreParticipant>(),
  sections: new Map<string, ExportSection>(),
}));
const hooksOf = (deps: AppDeps) => deps.scope.get(HOOKS);
