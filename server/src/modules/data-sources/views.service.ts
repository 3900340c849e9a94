import { ApiError } from '../../platform/http/errors.js';
import { requireLevel } from './access.js';
import { getSourceRow, parseJson, snapshotOf } from './data-sources.repo.js';
import type { Env } from './data-sources.service.js';
import type { Column } from './providers/types.js';
import { applyView, type View } from './views.js';

/**
 * The rows a view gives now (POST /data-sources/{id}/views/preview): the source's current
 * data through `applyView` in the source's time zone. Every mistake in the view comes back
 * at once, as 400 `validation_failed` with one issue per problem.
 */
export async function previewView(env: Env, id: string, view: View, now = new Date()) {
  const db = env.deps.db;
  const row = await getSourceRow(db, id);
  await requireLevel(db, env.caller, id, 'viewer', row.name);
  const snapshot = await snapshotOf(db, id);
  const dataset = snapshot ?? { columns: parseJson<Column[]>(row.columns, []), rows: [] };
  const result = applyView(dataset, view, { timeZone: row.time_zone, now });
  if (!result.ok) {
    const issues = result.errors.map((e) => ({ location: 'body', path: e.path, message: e.message, code: e.code }));
    throw new ApiError('validation_failed', result.errors.map((e) => e.message).join('; '), { details: { issues } });
  }
  return { columns: result.columns, rows: result.rows, revision: snapshot?.revision ?? null, fetchedAt: snapshot?.fetchedAt ?? null };
}
