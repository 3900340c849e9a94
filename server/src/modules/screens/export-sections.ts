import { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { invalidAt, parseSection, plan, registerExportSection, stableJson, TimeZoneName, type ExportSection } from '../system/index.js';
import { allGroups, findGroup, upsertGroup } from './groups.repo.js';
import { Span } from './groups.service.js';
import { allLocations, findLocation, upsertLocation } from './locations.repo.js';
import { PolicyDocument } from './policies.js';
import { bumpManifestRevision } from './revision.js';
import { existingScreenIds } from './screens.repo.js';
import { groupMemberIds, locationScreenIds } from './targets.repo.js';
import { uuidParam } from '../../platform/http/route.js';
import { storableJson } from '../../platform/db/json.js';

/**
 * The screens module's sections of the settings export (docs/operations.md, "Settings
 * export"): locations and screen groups with their policies and spans. After an import
 * commits, the screens whose manifest it changed get their revision bumped, as the
 * location and group routes do.
 */

/** After the import's commit: the screens an applied section changed. */
async function bumpScreens(deps: AppDeps, result: void | { screenIds?: string[] }): Promise<void> {
  if (result?.screenIds?.length) await bumpManifestRevision(deps, result.screenIds);
}

function parseJson(text: string | null): Record<string, unknown> | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

const Location = z
  .object({
    id: uuidParam,
    name: z.string().trim().min(1).max(200),
    address: z.string().max(1000).nullable().default(null),
    timeZone: TimeZoneName,
    latitude: z.number().min(-90).max(90).nullable().default(null),
    longitude: z.number().min(-180).max(180).nullable().default(null),
    notes: z.string().max(5000).nullable().default(null),
  })
  .strict();
const Locations = z.array(Location).max(10_000);

const Group = z
  .object({
    id: uuidParam,
    name: z.string().trim().min(1).max(200),
    description: z.string().max(5000).nullable().default(null),
    /** The group's screen policy: the screens module's PolicyDocument (PUT /screen-groups/{id}/policy). */
    policy: PolicyDocument.nullable().default(null),
    /** The video wall: the screens module's Span (PUT /screen-groups/{id}/span). */
    span: Span.nullable().default(null),
  })
  .strict();
const Groups = z.array(Group).max(10_000);
type Group = z.output<typeof Group>;

/**
 * A span names screens: the same rules as PUT /screen-groups/{id}/span, on this server. Every
 * cell inside the grid, one screen per cell and one cell per screen, and each cell's screen a
 * screen here and a member of the group here (memberships are not exported: on another
 * server, pair and group the screens first, or import the group with `span: null`).
 */
async function checkSpans(db: Db, groups: Group[]): Promise<void> {
  for (const [gi, g] of groups.entries()) {
    if (!g.span) continue;
    const members = new Set(await groupMemberIds(db, g.id));
    const cellIds = g.span.cells.map((c) => c.screenId.toLowerCase());
    const known = await existingScreenIds(db, cellIds);
    const positions = new Set<string>();
    const screens = new Set<string>();
    for (const [ci, c] of g.span.cells.entries()) {
      const at = [gi, 'span', 'cells', ci];
      const id = c.screenId.toLowerCase();
      if (c.row >= g.span.rows || c.column >= g.span.columns)
        throw invalidAt('groups', at, `cell (${c.row}, ${c.column}) is outside a ${g.span.rows}×${g.span.columns} grid`);
      if (positions.has(`${c.row},${c.column}`)) throw invalidAt('groups', at, `two screens in cell (${c.row}, ${c.column})`);
      if (screens.has(id)) throw invalidAt('groups', at, `screen ${id} has two cells`);
      if (!known.has(id))
        throw invalidAt('groups', [...at, 'screenId'], `screen ${id} is not a screen of this server (pair it first, or import the group with span null)`);
      if (!members.has(id))
        throw invalidAt(
          'groups',
          [...at, 'screenId'],
          `screen ${id} is not a member of group ${g.name} here (add it to the group first, or import the group with span null)`,
        );
      positions.add(`${c.row},${c.column}`);
      screens.add(id);
    }
  }
}

/** Locations: created or updated by id; locations the document lacks are left alone. */
const locationsSection: ExportSection = {
  committed: bumpScreens,
  key: 'locations',
  version: 1,
  order: 10,
  async exportData(db) {
    const rows = await allLocations(db);
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      address: r.address,
      timeZone: r.time_zone,
      latitude: r.latitude,
      longitude: r.longitude,
      notes: r.notes,
    }));
  },
  async preview(db, data) {
    const incoming = parseSection('locations', Locations, data);
    const existing = new Map(((await this.exportData(db)) as z.output<typeof Location>[]).map((l) => [l.id, l]));
    return plan(incoming, existing);
  },
  async apply(trx, data) {
    const now = new Date().toISOString();
    const affected: string[] = [];
    for (const l of Locations.parse(data)) {
      const before = await findLocation(trx, l.id);
      const values = { name: l.name, address: l.address, time_zone: l.timeZone, latitude: l.latitude, longitude: l.longitude, notes: l.notes, updated_at: now };
      await upsertLocation(trx, l.id, values, now);
      // As PATCH /locations/{id}: a new time zone re-times every screen there.
      if (before && before.time_zone !== l.timeZone) {
        affected.push(...(await locationScreenIds(trx, l.id)));
      }
    }
    return { screenIds: affected };
  },
};

/** Screen groups with their policies and span settings (memberships are per screen, not exported). */
const groupsSection: ExportSection = {
  committed: bumpScreens,
  key: 'groups',
  version: 1,
  order: 20,
  async exportData(db) {
    const rows = await allGroups(db);
    return rows.map((r) => ({ id: r.id, name: r.name, description: r.description, policy: parseJson(r.policy), span: parseJson(r.span) }));
  },
  async preview(db, data) {
    const incoming = parseSection('groups', Groups, data);
    await checkSpans(db, incoming);
    const existing = new Map(((await this.exportData(db)) as Group[]).map((g) => [g.id, g]));
    return plan(incoming, existing);
  },
  async apply(trx, data) {
    const now = new Date().toISOString();
    const affected: string[] = [];
    for (const g of Groups.parse(data)) {
      const before = await findGroup(trx, g.id);
      const values = {
        name: g.name,
        description: g.description,
        policy: g.policy ? storableJson(g.policy, 'policy') : null,
        span: g.span ? storableJson(g.span, 'span') : null,
        updated_at: now,
      };
      await upsertGroup(trx, g.id, values, now);
      if (!before) continue; // a new group has no members yet
      // As the group routes: a policy, a span, or the name (it orders policy precedence) of a
      // group with a policy changes what its members play.
      const oldPolicy = parseJson(before.policy);
      const oldSpan = parseJson(before.span) as { cells?: { screenId: string }[] } | null;
      const policyChanged = stableJson(oldPolicy) !== stableJson(g.policy);
      const spanChanged = stableJson(oldSpan) !== stableJson(g.span);
      const renamed = before.name !== g.name && (oldPolicy !== null || g.policy !== null);
      if (!policyChanged && !spanChanged && !renamed) continue;
      affected.push(...(await groupMemberIds(trx, g.id)));
      if (spanChanged) affected.push(...(oldSpan?.cells ?? []).map((c) => c.screenId), ...(g.span?.cells ?? []).map((c) => c.screenId));
    }
    return { screenIds: affected };
  },
};

/** Registers the locations and groups sections (screens module install). */
export function registerScreensExportSections(deps: AppDeps): void {
  registerExportSection(deps, locationsSection);
  registerExportSection(deps, groupsSection);
}
