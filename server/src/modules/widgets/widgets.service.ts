import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { ApiError, invalidReference } from '../../platform/http/errors.js';
import type { Principal } from '../../platform/http/auth.js';
import { KeyedLocks } from '../../platform/media/locks.js';
import { existingSourceIds, outputDocument, outputFor, requireSourceReader, type View, viewKeyOf, viewProblems } from '../data-sources/index.js';
import type { CompileInput, TemplateError, WidgetData } from './compiler.js';
import { fireWidgetBundleChange } from './hooks.js';
import {
  type BundleRow,
  bundleById,
  currentBundles,
  markBundleCurrent,
  setWidgetErrors,
  existingWidgets,
  publishedWidgets,
  findWidget,
  insertBundle,
  type WidgetRow,
  widgetsBoundTo,
} from './widgets.repo.js';
import type { BindingSchema } from './widgets.schemas.js';
import { isWidgetType, SETTINGS, type WidgetType } from './types.js';

/**
 * The compiler (liquidjs, sanitize-html with postcss, qrcode: ~4 MiB of heap) loads at the
 * first compile, not at start (docs/performance.md, "Idle memory").
 */
const compileWidget = async (input: CompileInput) => (await import('./compiler.js')).compileWidget(input);

/**
 * Widgets (issue 19, docs/widgets.md): validation, the bundles built from a widget and its
 * bound data, and the changes people make. A bundle is rebuilt when the widget changes and
 * when its source's data (or a date-dependent view) changes; the same inputs, or the same
 * bytes, make no new version. One build per widget at a time.
 */

export type Binding = { sourceId: string; view: View | null };

export interface WidgetInput {
  name: string;
  type: string;
  settings: Record<string, unknown>;
  template?: string | null;
  binding?: z.output<typeof BindingSchema> | null;
}

export interface Valid {
  type: WidgetType;
  settings: Record<string, unknown>;
  template: string | null;
  binding: Binding | null;
}

/** A manifest's view of a widget's current bundle. */
export interface WidgetBundleRef {
  widgetId: string;
  bundleId: string;
  revision: number;
  url: string;
  sha256: string;
  sizeBytes: number;
  contentType: 'text/html; charset=utf-8';
  sourceId: string | null;
  images: { assetId: string }[];
  durationMs: number | null;
  name: string;
  type: string;
}

export type WidgetBundleAnswer = { ok: true; bundle: WidgetBundleRef } | { ok: false; reason: 'no_widget' | 'no_bundle' | 'no_data'; message: string };

export const bundleUrl = (bundleId: string) => `/api/v1/player/widget-bundles/${bundleId}`;

const LOCKS = new ScopeKey('widgets.build-locks', () => new KeyedLocks());

export const parseJson = <T>(text: string | null, fallback: T): T => {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
};

export const bindingOf = (row: WidgetRow): Binding | null => parseJson<Binding | null>(row.binding, null);
export const settingsOf = (row: WidgetRow): Record<string, unknown> => parseJson<Record<string, unknown>>(row.settings, {});

function issues(list: { path: (string | number)[]; message: string; code: string }[], message: string, details: Record<string, unknown> = {}): ApiError {
  return new ApiError('validation_failed', message, { details: { ...details, issues: list.map((i) => ({ location: 'body', ...i })) } });
}

/**
 * Checks type, settings (the type's schema), template and binding; answers them normalised,
 * or throws 400 naming the field. With `auth`, a binding needs read access to the source
 * (403): the widget shows its rows.
 */
export async function validateWidget(db: Db, input: Omit<WidgetInput, 'name'>, auth?: Principal): Promise<Valid> {
  if (!isWidgetType(input.type)) throw issues([{ path: ['type'], message: 'not a widget type', code: 'invalid_value' }], `Unknown widget type "${input.type}"`);
  const type = input.type;
  const parsed = SETTINGS[type].safeParse(input.settings ?? {});
  if (!parsed.success) {
    throw issues(
      parsed.error.issues.map((i) => ({ path: ['settings', ...i.path.map((p) => (typeof p === 'number' ? p : String(p)))], message: i.message, code: i.code })),
      `The settings do not fit a ${type} widget: ${parsed.error.issues.map((i) => `${['settings', ...i.path].join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  let template: string | null = null;
  if (type === 'custom') {
    template = input.template ?? '';
  } else if (input.template !== undefined && input.template !== null) {
    throw issues([{ path: ['template'], message: 'only custom widgets take a template', code: 'invalid' }], `A ${type} widget takes no template`);
  }
  let binding: Binding | null = null;
  if (input.binding) {
    binding = { sourceId: input.binding.sourceId, view: input.binding.view ?? null };
    const known = await existingSourceIds(db, [binding.sourceId]);
    if (!known.has(binding.sourceId))
      throw invalidReference('The widget is bound to a data source that does not exist', { path: ['binding', 'sourceId'], message: 'no such data source' });
    if (auth) await requireSourceReader(db, auth, binding.sourceId);
    if (binding.view) {
      const problems = await viewProblems(db, binding.sourceId, binding.view);
      if (problems.length)
        throw issues(
          problems.map((p) => ({ path: ['binding', 'view'], message: p, code: 'invalid' })),
          `The view does not fit the source’s columns: ${problems.join('; ')}`,
        );
    }
  }
  return { type, settings: parsed.data as Record<string, unknown>, template, binding };
}

type DataAnswer =
  | { ok: true; data: WidgetData | null; outputSha: string | null; sourceRevision: number | null; images: string[] }
  | { ok: false; reason: 'no_data' | 'no_bundle'; message: string };

const MEDIA_PREFIX = 'placard-media:';

/** The bound view's rows, with image cells the server keeps as media made `placard-media:<assetId>` and other image cells dropped. */
async function dataFor(deps: AppDeps, binding: Binding | null): Promise<DataAnswer> {
  if (!binding) return { ok: true, data: null, outputSha: null, sourceRevision: null, images: [] };
  const out = await outputFor(deps, binding.sourceId, binding.view);
  if (!out.ok) return { ok: false, reason: out.reason === 'invalid_view' ? 'no_bundle' : 'no_data', message: out.message };
  const doc = await outputDocument(deps, out.output.outputId);
  if (!doc) return { ok: false, reason: 'no_data', message: 'The data source’s output is gone' };
  const media = new Map(out.images.map((i) => [i.url, i.assetId]));
  const imageColumns = doc.columns.filter((c) => c.type === 'image').map((c) => c.name);
  const used = new Set<string>();
  const rows = doc.rows.map((row) => {
    const copy: Record<string, unknown> = { ...row };
    for (const [k, v] of Object.entries(copy)) {
      if (typeof v !== 'string') continue;
      const assetId = media.get(v);
      if (assetId) {
        copy[k] = `${MEDIA_PREFIX}${assetId}`;
        used.add(assetId);
      } else if (imageColumns.includes(k)) copy[k] = null;
    }
    return copy;
  });
  return {
    ok: true,
    data: { columns: doc.columns, rows, sourceName: doc.sourceName },
    outputSha: out.output.sha256,
    sourceRevision: out.output.revision,
    images: [...used].sort(),
  };
}

/** Compiles an unsaved widget (compile-preview, and the check before a save) with its live data, or none. */
export async function compileUnsaved(deps: AppDeps, valid: Valid, now = new Date()) {
  const data = await dataFor(deps, valid.binding);
  return compileWidget({ ...valid, data: data.ok ? data.data : null, now });
}

function templateErrors(errors: TemplateError[]): ApiError {
  return issues(
    errors.map((e) => ({ path: ['template'], message: e.line ? `line ${e.line}, column ${e.column}: ${e.message}` : e.message, code: 'template_error' })),
    `The template does not compile: ${errors[0]?.message ?? 'error'}${errors[0]?.line ? ` (line ${errors[0].line}, column ${errors[0].column})` : ''}`,
    { errors },
  );
}

type BuildResult = { ok: true; row: BundleRow; changed: boolean } | { ok: false; reason: 'no_widget' | 'no_data' | 'no_bundle'; message: string };

/**
 * Makes the widget's current bundle match the widget and its data: a build when the inputs
 * moved on (widget revision, the output's bytes, the images), a new version only when the
 * bytes differ. A build that fails keeps the current bundle and records the errors.
 */
export async function buildBundle(deps: AppDeps, widgetId: string, now = new Date()): Promise<BuildResult> {
  const release = await deps.scope.get(LOCKS).acquire(widgetId);
  try {
    const db = deps.db;
    const widget = await findWidget(db, widgetId);
    if (!widget) return { ok: false, reason: 'no_widget', message: 'No such widget' };
    const type = widget.type as WidgetType;
    const settings = settingsOf(widget);
    const binding = bindingOf(widget);
    const data = await dataFor(deps, binding);
    const current = (await currentBundles(db, [widgetId])).get(widgetId);
    if (!data.ok) {
      await setErrors(db, widgetId, [{ message: data.message, line: null, column: null }]);
      return current ? { ok: true, row: current, changed: false } : data;
    }
    const inputSha = createHash('sha256')
      .update(JSON.stringify([widget.revision, data.outputSha, data.images]))
      .digest('hex');
    if (current && current.input_sha256 === inputSha && current.revision === widget.revision) return { ok: true, row: current, changed: false };
    const compiled = await compileWidget({ type, settings, template: widget.template, data: data.data, now });
    if (!compiled.ok) {
      await setErrors(db, widgetId, compiled.errors);
      return current
        ? { ok: true, row: current, changed: false }
        : { ok: false, reason: 'no_bundle', message: compiled.errors.map((e) => e.message).join('; ') };
    }
    const bytes = Buffer.from(compiled.html, 'utf8');
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const images = JSON.stringify(data.images.map((assetId) => ({ assetId })));
    if (current && current.sha256 === sha256 && current.images === images) {
      await markBundleCurrent(db, current.id, inputSha, widget.revision);
      await setErrors(db, widgetId, []);
      return { ok: true, row: { ...current, input_sha256: inputSha, revision: widget.revision }, changed: false };
    }
    const row: BundleRow = {
      id: newId(),
      widget_id: widgetId,
      revision: widget.revision,
      sha256,
      input_sha256: inputSha,
      size_bytes: bytes.length,
      built_at: nowIso(now.getTime()),
      images,
      source_id: binding?.sourceId ?? null,
      source_revision: data.sourceRevision,
    };
    const stored = await db.transaction().execute(async (trx) => {
      if (!(await findWidget(trx, widgetId))) return false;
      await insertBundle(trx, row, bytes);
      await setWidgetErrors(trx, widgetId, '[]');
      return true;
    });
    if (!stored) return { ok: false, reason: 'no_widget', message: 'No such widget' };
    return { ok: true, row, changed: true };
  } finally {
    release();
  }
}

async function setErrors(db: Db, widgetId: string, errors: TemplateError[]): Promise<void> {
  await setWidgetErrors(db, widgetId, JSON.stringify(errors));
}

/** Builds and tells the hooks when the current bundle changed. Never throws. */
export async function rebuildAndTell(deps: AppDeps, widgetIds: readonly string[]): Promise<void> {
  const changed: string[] = [];
  for (const id of widgetIds) {
    try {
      const r = await buildBundle(deps, id);
      if (r.ok && r.changed) changed.push(id);
    } catch (err) {
      deps.logger.error({ err, widgetId: id }, 'could not build a widget bundle');
    }
  }
  await fireWidgetBundleChange(deps, { widgetIds: changed, deleted: false });
}

/** A bound source's data or output changed: the widgets showing it are built again (only those whose view changed, when known). */
export async function onSourceChange(deps: AppDeps, sourceId: string, viewKeys: readonly string[] | null): Promise<void> {
  const widgets = (await widgetsBoundTo(deps.db, sourceId)).filter((w) => {
    const b = bindingOf(w);
    return b?.sourceId === sourceId && (viewKeys === null || viewKeys.includes(viewKeyOf(b.view).key));
  });
  await rebuildAndTell(
    deps,
    widgets.map((w) => w.id),
  );
}

const refOf = (widget: WidgetRow, row: BundleRow): WidgetBundleRef => ({
  widgetId: widget.id,
  bundleId: row.id,
  revision: row.revision,
  url: bundleUrl(row.id),
  sha256: row.sha256,
  sizeBytes: row.size_bytes,
  contentType: 'text/html; charset=utf-8',
  sourceId: row.source_id,
  images: parseJson<{ assetId: string }[]>(row.images, []),
  durationMs: typeof settingsOf(widget).durationMs === 'number' ? (settingsOf(widget).durationMs as number) : null,
  name: widget.name,
  type: widget.type,
});

/** The widget's current bundle for a manifest; built when missing. Never throws for user data. */
export async function widgetBundleFor(deps: AppDeps, widgetId: string): Promise<WidgetBundleAnswer> {
  const widget = await findWidget(deps.db, widgetId);
  if (!widget) return { ok: false, reason: 'no_widget', message: 'The widget no longer exists' };
  // Never published (approvals on): players treat it as absent until a publisher publishes it.
  if (widget.published_at === null) return { ok: false, reason: 'no_widget', message: 'The widget has never been published' };
  let row = (await currentBundles(deps.db, [widgetId])).get(widgetId);
  if (!row) {
    const built = await buildBundle(deps, widgetId);
    if (!built.ok) return built;
    row = built.row;
  }
  const fresh = (await findWidget(deps.db, widgetId)) ?? widget;
  return { ok: true, bundle: refOf(fresh, row) };
}

export async function existingWidgetIds(db: Db, ids: readonly string[]): Promise<Set<string>> {
  return existingWidgets(db, ids);
}

/** The widgets of `ids` that exist and were published: what players may play (a new widget under approvals is not). */
export async function publishedWidgetIds(db: Db, ids: readonly string[]): Promise<Set<string>> {
  return publishedWidgets(db, ids);
}

export async function widgetOfBundle(db: Db, bundleId: string): Promise<{ widgetId: string } | null> {
  const row = await bundleById(db, bundleId);
  return row ? { widgetId: row.widget_id } : null;
}

/** The data-sources usage finder: the widgets bound to these sources (deleting a source they show is 409). */
export async function widgetSourceUsages(db: Db, sourceIds: readonly string[]) {
  const out: { sourceId: string; type: string; id: string; name: string | null }[] = [];
  for (const sourceId of sourceIds)
    for (const w of await widgetsBoundTo(db, sourceId)) if (bindingOf(w)?.sourceId === sourceId) out.push({ sourceId, type: 'widget', id: w.id, name: w.name });
  return out;
}

export { templateErrors };
