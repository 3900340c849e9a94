import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import { ensureInstanceId } from '../../platform/db/meta.js';
import { ApiError } from '../../platform/http/errors.js';
import { SERVER_VERSION } from '../../version.js';
import { Span } from '../screens/groups.routes.js';
import { PolicyDocument } from '../screens/policies.js';
import { bumpManifestRevision, type RevisionDeps } from '../screens/revision.js';
import { exportSectionList, registerExportSection, type ExportSection, type ImportPlan } from './hooks.js';
import { DEFAULT_SETTINGS, invalidateSettings, LOCAL_SETTINGS, mergeSettings, readSettings, Settings, TimeZoneName } from './settings.js';

export const EXPORT_FORMAT = 'placard-settings-export';
export const EXPORT_FORMAT_VERSION = 1;

export const ExportDocument = z.object({
  format: z.literal(EXPORT_FORMAT),
  formatVersion: z.int().min(1),
  exportedAt: z.string().max(40).optional(),
  serverVersion: z.string().max(100).optional(),
  instanceId: z.string().max(100).optional(),
  sections: z.record(z.string().max(64), z.object({ version: z.int().min(1), data: z.unknown() })),
});
export type ExportDocument = z.output<typeof ExportDocument>;

function invalid(section: string, error: z.ZodError): ApiError {
  const issues = error.issues.map((i) => ({ location: 'body', path: ['sections', section, 'data', ...i.path.map(String)], message: i.message, code: i.code }));
  const first = issues[0];
  return new ApiError('validation_failed', `Invalid section ${section}${first ? ` at ${first.path.slice(3).join('.') || '(root)'}: ${first.message}` : ''}`, { details: { issues } });
}

function parseSection<T>(key: string, schema: z.ZodType<T>, data: unknown): T {
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw invalid(key, parsed.error);
  return parsed.data;
}

/** One problem found after parsing (a reference to something this server lacks), in the same shape. */
function invalidAt(section: string, at: (string | number)[], message: string): ApiError {
  const issue = { location: 'body', path: ['sections', section, 'data', ...at.map(String)], message, code: 'custom' };
  return new ApiError('validation_failed', `Invalid section ${section} at ${at.join('.')}: ${message}`, { details: { issues: [issue] } });
}

/** JSON with object keys sorted: the same document compares equal whatever its key order. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

// ---------------------------------------------------------------- built-in sections

/** The settings a document makes: its own over the defaults, this server's local ones kept (LOCAL_SETTINGS). */
function importedSettings(current: Settings, data: unknown): Settings {
  const plain = data && typeof data === 'object' && !Array.isArray(data) ? { ...(data as Record<string, unknown>) } : data;
  if (plain && typeof plain === 'object') for (const k of LOCAL_SETTINGS) delete (plain as Record<string, unknown>)[k];
  const next = parseSection('settings', Settings, mergeSettings(DEFAULT_SETTINGS, plain));
  for (const k of LOCAL_SETTINGS) (next as Record<string, unknown>)[k] = current[k];
  return next;
}

/**
 * Whole settings: fields the document lacks take their defaults (an import makes the
 * settings the document's), except LOCAL_SETTINGS (files of this server), which are neither
 * exported nor imported.
 */
const settingsSection: ExportSection = {
  key: 'settings',
  version: 1,
  order: 0,
  async exportData(db) {
    const settings: Record<string, unknown> = { ...(await readSettings(db)).settings };
    for (const k of LOCAL_SETTINGS) delete settings[k];
    return settings;
  },
  async preview(db, data) {
    const current = (await readSettings(db)).settings;
    const next = importedSettings(current, data);
    const changes: ImportPlan['changes'] = [];
    for (const key of (Object.keys(next) as (keyof Settings)[]).filter((k) => !(LOCAL_SETTINGS as readonly string[]).includes(k))) {
      const same = JSON.stringify(current[key]) === JSON.stringify(next[key]);
      changes.push({ action: same ? 'unchanged' : 'update', name: key, ...(same ? {} : { detail: `${JSON.stringify(current[key])} -> ${JSON.stringify(next[key])}` }) });
    }
    return { changes };
  },
  async apply(trx, data) {
    const current = await readSettings(trx);
    const next = importedSettings(current.settings, data);
    const now = new Date().toISOString();
    await trx
      .insertInto('settings')
      .values({ id: 1, data: JSON.stringify(next), revision: current.revision + 1, updated_at: now, updated_by: null })
      .onConflict((oc) => oc.column('id').doUpdateSet({ data: JSON.stringify(next), revision: current.revision + 1, updated_at: now, updated_by: null }))
      .execute();
    invalidateSettings();
  },
};

const Location = z
  .object({
    id: z.uuid().transform((s) => s.toLowerCase()),
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
    id: z.uuid().transform((s) => s.toLowerCase()),
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

function parseJson(text: string | null): Record<string, unknown> | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function plan<T extends { id: string; name: string }>(incoming: T[], existing: Map<string, T>): ImportPlan {
  const seen = new Set<string>();
  const changes: ImportPlan['changes'] = [];
  for (const item of incoming) {
    if (seen.has(item.id)) throw new ApiError('validation_failed', `The id ${item.id} appears twice`);
    seen.add(item.id);
    const have = existing.get(item.id);
    if (!have) changes.push({ action: 'create', id: item.id, name: item.name });
    else changes.push({ action: stableJson(have) === stableJson(item) ? 'unchanged' : 'update', id: item.id, name: item.name });
  }
  return { changes };
}

/**
 * A span names screens: the same rules as PUT /screen-groups/{id}/span, on this server. Every
 * cell inside the grid, one screen per cell and one cell per screen, and each cell's screen a
 * screen here and a member of the group here (memberships are not exported: on another
 * server, pair and group the screens first, or import the group with `span: null`).
 */
async function checkSpans(db: Db, groups: Group[]): Promise<void> {
  for (const [gi, g] of groups.entries()) {
    if (!g.span) continue;
    const members = new Set((await db.selectFrom('screen_group_members').select('screen_id').where('group_id', '=', g.id).execute()).map((r) => r.screen_id));
    const cellIds = g.span.cells.map((c) => c.screenId.toLowerCase());
    const known = new Set(
      cellIds.length ? (await db.selectFrom('screens').select('id').where('id', 'in', cellIds).execute()).map((r) => r.id) : [],
    );
    const positions = new Set<string>();
    const screens = new Set<string>();
    for (const [ci, c] of g.span.cells.entries()) {
      const at = [gi, 'span', 'cells', ci];
      const id = c.screenId.toLowerCase();
      if (c.row >= g.span.rows || c.column >= g.span.columns) throw invalidAt('groups', at, `cell (${c.row}, ${c.column}) is outside a ${g.span.rows}×${g.span.columns} grid`);
      if (positions.has(`${c.row},${c.column}`)) throw invalidAt('groups', at, `two screens in cell (${c.row}, ${c.column})`);
      if (screens.has(id)) throw invalidAt('groups', at, `screen ${id} has two cells`);
      if (!known.has(id)) throw invalidAt('groups', [...at, 'screenId'], `screen ${id} is not a screen of this server (pair it first, or import the group with span null)`);
      if (!members.has(id)) throw invalidAt('groups', [...at, 'screenId'], `screen ${id} is not a member of group ${g.name} here (add it to the group first, or import the group with span null)`);
      positions.add(`${c.row},${c.column}`);
      screens.add(id);
    }
  }
}

/** Locations: created or updated by id; locations the document lacks are left alone. */
const locationsSection: ExportSection = {
  key: 'locations',
  version: 1,
  order: 10,
  async exportData(db) {
    const rows = await db.selectFrom('locations').selectAll().orderBy('name').orderBy('id').execute();
    return rows.map((r) => ({ id: r.id, name: r.name, address: r.address, timeZone: r.time_zone, latitude: r.latitude, longitude: r.longitude, notes: r.notes }));
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
      const before = await trx.selectFrom('locations').select('time_zone').where('id', '=', l.id).executeTakeFirst();
      const values = { name: l.name, address: l.address, time_zone: l.timeZone, latitude: l.latitude, longitude: l.longitude, notes: l.notes, updated_at: now };
      await trx
        .insertInto('locations')
        .values({ id: l.id, ...values, created_at: now })
        .onConflict((oc) => oc.column('id').doUpdateSet(values))
        .execute();
      // As PATCH /locations/{id}: a new time zone re-times every screen there.
      if (before && before.time_zone !== l.timeZone) {
        affected.push(...(await trx.selectFrom('screens').select('id').where('location_id', '=', l.id).execute()).map((r) => r.id));
      }
    }
    return { screenIds: affected };
  },
};

/** Screen groups with their policies and span settings (memberships are per screen, not exported). */
const groupsSection: ExportSection = {
  key: 'groups',
  version: 1,
  order: 20,
  async exportData(db) {
    const rows = await db.selectFrom('screen_groups').selectAll().orderBy('name').orderBy('id').execute();
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
      const before = await trx.selectFrom('screen_groups').select(['name', 'policy', 'span']).where('id', '=', g.id).executeTakeFirst();
      const values = { name: g.name, description: g.description, policy: g.policy ? JSON.stringify(g.policy) : null, span: g.span ? JSON.stringify(g.span) : null, updated_at: now };
      await trx
        .insertInto('screen_groups')
        .values({ id: g.id, ...values, created_at: now })
        .onConflict((oc) => oc.column('id').doUpdateSet(values))
        .execute();
      if (!before) continue; // a new group has no members yet
      // As the group routes: a policy, a span, or the name (it orders policy precedence) of a
      // group with a policy changes what its members play.
      const oldPolicy = parseJson(before.policy);
      const oldSpan = parseJson(before.span) as { cells?: { screenId: string }[] } | null;
      const policyChanged = stableJson(oldPolicy) !== stableJson(g.policy);
      const spanChanged = stableJson(oldSpan) !== stableJson(g.span);
      const renamed = before.name !== g.name && (oldPolicy !== null || g.policy !== null);
      if (!policyChanged && !spanChanged && !renamed) continue;
      affected.push(...(await trx.selectFrom('screen_group_members').select('screen_id').where('group_id', '=', g.id).execute()).map((r) => r.screen_id));
      if (spanChanged) affected.push(...(oldSpan?.cells ?? []).map((c) => c.screenId), ...(g.span?.cells ?? []).map((c) => c.screenId));
    }
    return { screenIds: affected };
  },
};

registerExportSection(settingsSection);
registerExportSection(locationsSection);
registerExportSection(groupsSection);

// ---------------------------------------------------------------- export, preview, apply

export async function exportDocument(db: Db): Promise<ExportDocument> {
  const sections: ExportDocument['sections'] = {};
  for (const s of exportSectionList()) sections[s.key] = { version: s.version, data: await s.exportData(db) };
  return { format: EXPORT_FORMAT, formatVersion: EXPORT_FORMAT_VERSION, exportedAt: new Date().toISOString(), serverVersion: SERVER_VERSION, instanceId: await ensureInstanceId(db), sections };
}

export interface ImportPreview {
  sections: { key: string; version: number; changes: ImportPlan['changes']; summary: { create: number; update: number; unchanged: number; delete: number } }[];
  ignored: { key: string; reason: string }[];
}

/** Validates the whole document and answers what applying it would change; changes nothing. */
export async function previewImport(db: Db, doc: ExportDocument): Promise<ImportPreview> {
  if (doc.formatVersion > EXPORT_FORMAT_VERSION) {
    throw new ApiError('validation_failed', `This export is format ${doc.formatVersion}; this server reads up to ${EXPORT_FORMAT_VERSION}. Upgrade Placard first.`);
  }
  const known = new Map(exportSectionList().map((s) => [s.key, s]));
  const out: ImportPreview = { sections: [], ignored: [] };
  for (const [key, section] of Object.entries(doc.sections)) {
    const def = known.get(key);
    if (!def) {
      out.ignored.push({ key, reason: 'this server has no such section' });
      continue;
    }
    if (section.version > def.version) throw new ApiError('validation_failed', `Section ${key} is version ${section.version}; this server reads up to ${def.version}`);
  }
  for (const def of exportSectionList()) {
    const section = doc.sections[def.key];
    if (!section) continue;
    const p = await def.preview(db, section.data, section.version);
    const count = (a: string) => p.changes.filter((c) => c.action === a).length;
    out.sections.push({ key: def.key, version: section.version, changes: p.changes, summary: { create: count('create'), update: count('update'), unchanged: count('unchanged'), delete: count('delete') } });
  }
  return out;
}

/**
 * Validates everything first, then applies every section in one transaction: all or
 * nothing. After the commit, screens whose manifest the import changed (members of a group
 * whose policy or span changed, screens of a location with a new time zone) get their
 * manifest revision bumped, as the group and location routes do.
 */
export async function applyImport(deps: RevisionDeps, doc: ExportDocument): Promise<ImportPreview> {
  const preview = await previewImport(deps.db, doc);
  const affected: string[] = [];
  await deps.db.transaction().execute(async (trx) => {
    for (const def of exportSectionList()) {
      const section = doc.sections[def.key];
      if (!section) continue;
      const result = await def.apply(trx, section.data, section.version);
      if (result?.screenIds) affected.push(...result.screenIds);
    }
  });
  await bumpManifestRevision(deps, affected);
  return preview;
}
