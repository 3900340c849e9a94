import type { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { conflict, notFound } from '../../platform/http/errors.js';
import { roleAtLeast, type Principal } from '../../platform/http/auth.js';
import type { RevisionCheck } from '../../platform/http/revision.js';
import { forgetContent, insertPublication, listPublications, type PublicationSummary, publisherNeededToDelete } from '../../platform/publications.js';
import { approvalsRequired } from '../system/index.js';
import type { TemplateError } from './compiler.js';
import { findWidgetUsages, fireWidgetBundleChange } from './hooks.js';
import {
  type BundleRow,
  currentBundles,
  deleteUnreferencedBlobs,
  deleteWidgetRow,
  findWidget,
  insertWidget,
  updateWidget,
  type WidgetRow,
} from './widgets.repo.js';
import type { BindingSchema } from './widgets.schemas.js';
import {
  bindingOf,
  compileUnsaved,
  parseJson,
  rebuildAndTell,
  settingsOf,
  templateErrors,
  validateWidget,
  type Binding,
  type WidgetInput,
} from './widgets.service.js';

/**
 * The routes' side of widgets: the DTO and the changes people make, on the publication
 * model (issue 20, docs/widgets.md "Drafts and publications"): the row is what players
 * play (its bundle is built from it), `widgets.draft` holds unpublished changes.
 */

/** A widget as a publication (and a draft) keeps it. */
export interface WidgetSnapshot {
  name: string;
  type: string;
  settings: Record<string, unknown>;
  template: string | null;
  binding: Binding | null;
}

export const snapshotOfRow = (row: WidgetRow): WidgetSnapshot => ({
  name: row.name,
  type: row.type,
  settings: settingsOf(row),
  template: row.template,
  binding: bindingOf(row),
});

export const draftOf = (row: WidgetRow): WidgetSnapshot | null => parseJson<WidgetSnapshot | null>(row.draft, null);

/** The row's fields a snapshot sets. */
export const fieldsOf = (s: WidgetSnapshot) => ({
  name: s.name,
  settings: JSON.stringify(s.settings),
  template: s.template,
  binding: s.binding ? JSON.stringify(s.binding) : null,
});

/** What the editor sees and edits: the row with its draft applied. */
export function effectiveWidget(row: WidgetRow): WidgetRow {
  const draft = draftOf(row);
  return draft ? { ...row, ...fieldsOf(draft) } : row;
}

/** The latest publication of a widget (what players play once it is published), or null. */
export async function currentWidgetPublication(db: Db, id: string): Promise<PublicationSummary | null> {
  return (await listPublications(db, 'widget', id, { limit: 1 })).items[0] ?? null;
}

export async function widgetDto(db: Db, id: string) {
  const row = await findWidget(db, id);
  if (!row) throw notFound('Widget');
  const bundle = (await currentBundles(db, [id])).get(id);
  return dtoOf(row, bundle, row.published_at ? await currentWidgetPublication(db, id) : null);
}

/** The widget as the client sees it: its draft when it has one, the bundle players have, the publication they play. */
export function dtoOf(stored: WidgetRow, bundle: BundleRow | undefined, publication: PublicationSummary | null) {
  const row = effectiveWidget(stored);
  const binding = bindingOf(row);
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    settings: settingsOf(row),
    template: row.template,
    binding: binding ? { sourceId: binding.sourceId, view: binding.view ?? null } : null,
    revision: row.revision,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    bundle: bundle ? { id: bundle.id, sha256: bundle.sha256, sizeBytes: bundle.size_bytes, builtAt: bundle.built_at } : null,
    errors: parseJson<TemplateError[]>(row.errors, []),
    publication: publication
      ? { id: publication.id, number: publication.number, publishedAt: publication.publishedAt, publishedBy: publication.publishedBy }
      : null,
    unpublishedChanges: stored.published_at === null || stored.draft !== null,
  };
}

const userIdOf = (auth: Principal) => (auth.kind === 'session' ? auth.userId : null);

/**
 * Validates and compiles (400 with the template's errors, nothing stored), stores. Approvals
 * off: published at once (publication 1) and its bundle built. Approvals on: unpublished,
 * the body its draft; players treat it as absent until a publisher publishes it.
 */
export async function createWidget(deps: AppDeps, input: WidgetInput, auth: Principal): Promise<string> {
  const userId = userIdOf(auth);
  const valid = await validateWidget(deps.db, input, auth);
  const compiled = await compileUnsaved(deps, valid);
  if (!compiled.ok) throw templateErrors(compiled.errors);
  const approvals = await approvalsRequired(deps.db);
  const id = newId();
  const at = nowIso();
  const snapshot: WidgetSnapshot = { name: input.name, type: valid.type, settings: valid.settings, template: valid.template, binding: valid.binding };
  await deps.db.transaction().execute(async (trx) => {
    await insertWidget(trx, {
      id,
      type: valid.type,
      ...fieldsOf(snapshot),
      revision: 1,
      content_revision: 1,
      errors: '[]',
      created_at: at,
      updated_at: at,
      created_by: userId,
      updated_by: userId,
      draft: approvals ? JSON.stringify(snapshot) : null,
      published_at: approvals ? null : at,
    });
    if (!approvals) await insertPublication(trx, { type: 'widget', contentId: id, snapshot, note: '', source: 'edit', by: userId });
  });
  if (!approvals) await rebuildAndTell(deps, [id]);
  return id;
}

/**
 * A PATCH, validated and compiled as always. Approvals off: written to the row, published
 * (a publication), the bundle rebuilt and screens told. Approvals on: written to the draft
 * only; the bundle is not rebuilt and screens keep the one they play.
 */
export async function patchWidget(
  deps: AppDeps,
  id: string,
  patch: { name?: string; settings?: Record<string, unknown>; template?: string | null; binding?: z.output<typeof BindingSchema> | null },
  check: RevisionCheck,
  auth: Principal,
): Promise<void> {
  const userId = userIdOf(auth);
  const stored = await findWidget(deps.db, id);
  if (!stored) throw notFound('Widget');
  check(stored.revision);
  const row = effectiveWidget(stored);
  const old = bindingOf(row);
  const valid = await validateWidget(
    deps.db,
    {
      type: row.type,
      settings: patch.settings ?? settingsOf(row),
      template: patch.template !== undefined ? patch.template : row.template,
      binding: patch.binding !== undefined ? patch.binding : old ? { sourceId: old.sourceId, view: old.view } : null,
    },
    patch.binding !== undefined ? auth : undefined,
  );
  const contentChanged = patch.settings !== undefined || patch.template !== undefined || patch.binding !== undefined;
  if (contentChanged) {
    const compiled = await compileUnsaved(deps, valid);
    if (!compiled.ok) throw templateErrors(compiled.errors);
  }
  const approvals = await approvalsRequired(deps.db);
  const snapshot: WidgetSnapshot = { name: patch.name ?? row.name, type: row.type, settings: valid.settings, template: valid.template, binding: valid.binding };
  await deps.db.transaction().execute(async (trx) => {
    const now = await findWidget(trx, id);
    if (!now) throw notFound('Widget');
    check(now.revision);
    const common = {
      revision: now.revision + 1,
      content_revision: contentChanged ? now.content_revision + 1 : now.content_revision,
      updated_at: nowIso(),
      updated_by: userId,
    };
    if (approvals) return updateWidget(trx, id, { ...common, draft: JSON.stringify(snapshot) });
    await updateWidget(trx, id, { ...common, ...fieldsOf(snapshot), draft: null, published_at: nowIso() });
    await insertPublication(trx, { type: 'widget', contentId: id, snapshot, note: '', source: 'edit', by: userId });
  });
  if (!approvals) await rebuildAndTell(deps, [id]);
}

export async function duplicateWidget(deps: AppDeps, id: string, auth: Principal): Promise<string> {
  const stored = await findWidget(deps.db, id);
  if (!stored) throw notFound('Widget');
  const row = effectiveWidget(stored);
  const binding = bindingOf(row);
  return createWidget(
    deps,
    {
      name: `${row.name} (copy)`.slice(0, 200),
      type: row.type,
      settings: settingsOf(row),
      template: row.template,
      binding: binding ? { sourceId: binding.sourceId, view: binding.view } : null,
    },
    auth,
  );
}

/**
 * Deletes a widget nothing uses (409 naming the users otherwise); its bundles and
 * publications go with it. With approvals on, deleting one players play takes a publisher.
 */
export async function deleteWidget(deps: AppDeps, id: string, check: RevisionCheck, auth: Principal): Promise<void> {
  const approvals = await approvalsRequired(deps.db);
  await deps.db.transaction().execute(async (trx) => {
    const row = await findWidget(trx, id);
    if (!row) throw notFound('Widget');
    check(row.revision);
    if (approvals && row.published_at !== null && !(auth.kind === 'session' && roleAtLeast(auth.role, 'publisher')))
      throw publisherNeededToDelete(`Widget "${row.name}"`);
    const usedBy = await findWidgetUsages(deps, [id], trx);
    if (usedBy.length)
      throw conflict(`The widget is still used by ${usedBy.map((u) => `${u.type} "${u.name ?? u.id}"`).join(', ')}`, {
        usedBy: usedBy.map((u) => ({ type: u.type, id: u.id, name: u.name })),
      });
    await deleteWidgetRow(trx, id);
    await forgetContent(deps, trx, 'widget', id, row.name);
    await deleteUnreferencedBlobs(trx);
  });
  await fireWidgetBundleChange(deps, { widgetIds: [id], deleted: true });
}
