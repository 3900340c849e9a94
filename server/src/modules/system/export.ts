import { z } from 'zod';
import { ensureInstanceId } from '../../platform/db/meta.js';
import { ApiError } from '../../platform/http/errors.js';
import { SERVER_VERSION } from '../../version.js';
import type { AppDeps } from '../../platform/app-deps.js';
import { storableJson } from '../../platform/db/json.js';
import { exportSectionList, registerExportSection, type ExportSection, type ImportPlan } from './hooks.js';
import { DEFAULT_SETTINGS, invalidateSettings, LOCAL_SETTINGS, mergeSettings, readSettings, Settings } from './settings.js';
import { storeSettings } from './settings.repo.js';

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
  return new ApiError('validation_failed', `Invalid section ${section}${first ? ` at ${first.path.slice(3).join('.') || '(root)'}: ${first.message}` : ''}`, {
    details: { issues },
  });
}

export function parseSection<T>(key: string, schema: z.ZodType<T>, data: unknown): T {
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw invalid(key, parsed.error);
  return parsed.data;
}

/** One problem found after parsing (a reference to something this server lacks), in the same shape. */
export function invalidAt(section: string, at: (string | number)[], message: string): ApiError {
  const issue = { location: 'body', path: ['sections', section, 'data', ...at.map(String)], message, code: 'custom' };
  return new ApiError('validation_failed', `Invalid section ${section} at ${at.join('.')}: ${message}`, { details: { issues: [issue] } });
}

/** JSON with object keys sorted: the same document compares equal whatever its key order. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
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
      changes.push({
        action: same ? 'unchanged' : 'update',
        name: key,
        ...(same ? {} : { detail: `${JSON.stringify(current[key])} -> ${JSON.stringify(next[key])}` }),
      });
    }
    return { changes };
  },
  async apply(trx, data) {
    const current = await readSettings(trx);
    const next = importedSettings(current.settings, data);
    const stored = storableJson(next, 'The settings section');
    const now = new Date().toISOString();
    await storeSettings(trx, { data: stored, revision: current.revision + 1, updated_at: now, updated_by: null });
    invalidateSettings();
  },
};

export function plan<T extends { id: string; name: string }>(incoming: T[], existing: Map<string, T>): ImportPlan {
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

/** The settings section of exports (the screens module adds locations and groups, content its own). */
export function registerSystemExportSections(deps: AppDeps): void {
  registerExportSection(deps, settingsSection);
}

// ---------------------------------------------------------------- export, preview, apply

export async function exportDocument(deps: AppDeps): Promise<ExportDocument> {
  const db = deps.db;
  const sections: ExportDocument['sections'] = {};
  for (const s of exportSectionList(deps)) sections[s.key] = { version: s.version, data: await s.exportData(db) };
  return {
    format: EXPORT_FORMAT,
    formatVersion: EXPORT_FORMAT_VERSION,
    exportedAt: new Date().toISOString(),
    serverVersion: SERVER_VERSION,
    instanceId: await ensureInstanceId(db),
    sections,
  };
}

export interface ImportPreview {
  sections: { key: string; version: number; changes: ImportPlan['changes']; summary: { create: number; update: number; unchanged: number; delete: number } }[];
  ignored: { key: string; reason: string }[];
}

/** Validates the whole document and answers what applying it would change; changes nothing. */
export async function previewImport(deps: AppDeps, doc: ExportDocument): Promise<ImportPreview> {
  const db = deps.db;
  if (doc.formatVersion > EXPORT_FORMAT_VERSION) {
    throw new ApiError(
      'validation_failed',
      `This export is format ${doc.formatVersion}; this server reads up to ${EXPORT_FORMAT_VERSION}. Upgrade Placard first.`,
    );
  }
  const known = new Map(exportSectionList(deps).map((s) => [s.key, s]));
  const out: ImportPreview = { sections: [], ignored: [] };
  for (const [key, section] of Object.entries(doc.sections)) {
    const def = known.get(key);
    if (!def) {
      out.ignored.push({ key, reason: 'this server has no such section' });
      continue;
    }
    if (section.version > def.version)
      throw new ApiError('validation_failed', `Section ${key} is version ${section.version}; this server reads up to ${def.version}`);
  }
  for (const def of exportSectionList(deps)) {
    const section = doc.sections[def.key];
    if (!section) continue;
    const p = await def.preview(db, section.data, section.version);
    const count = (a: string) => p.changes.filter((c) => c.action === a).length;
    out.sections.push({
      key: def.key,
      version: section.version,
      changes: p.changes,
      summary: { create: count('create'), update: count('update'), unchanged: count('unchanged'), delete: count('delete') },
    });
  }
  return out;
}

/**
 * Validates everything first, then applies every section in one transaction: all or
 * nothing. After the commit, screens whose manifest the import changed (members of a group
 * whose policy or span changed, screens of a location with a new time zone) get their
 * manifest revision bumped, as the group and location routes do.
 */
export async function applyImport(deps: AppDeps, doc: ExportDocument): Promise<ImportPreview> {
  const preview = await previewImport(deps, doc);
  const applied: { def: ExportSection; result: Awaited<ReturnType<ExportSection['apply']>> }[] = [];
  await deps.db.transaction().execute(async (trx) => {
    for (const def of exportSectionList(deps)) {
      const section = doc.sections[def.key];
      if (!section) continue;
      applied.push({ def, result: await def.apply(trx, section.data, section.version) });
    }
  });
  for (const { def, result } of applied) await def.committed?.(deps, result);
  return preview;
}
