import type { Db } from '../../platform/db/database.js';
import { ApiError } from '../../platform/http/errors.js';
import { parseJson } from './data-sources.repo.js';
import { FieldSchema, rowValues, validateValues } from './fields.js';
import { publishedFieldsJson } from './forms.repo.js';
import type { Row } from './providers/types.js';

/**
 * Rows written to a table whose columns follow a published form must also fit its fields
 * (required, bounds, options). Such a write replaces the table's records with published, live
 * ones, past the workflow: only the table's owners may (`requireOwner`, checked first).
 */
export async function checkRowsAgainstForm(db: Db, sourceId: string, rows: readonly Row[], requireOwner: () => Promise<unknown>): Promise<void> {
  const json = await publishedFieldsJson(db, sourceId);
  if (json === null) return;
  await requireOwner();
  const visible = parseJson<unknown[]>(json, [])
    .map((f) => FieldSchema.parse(f))
    .filter((f) => f.showOnScreens);
  const issues = rows.flatMap((row, i) =>
    validateValues(visible, rowValues(visible, row)).map((issue) => ({
      location: 'body',
      path: ['rows', i, ...issue.path],
      message: issue.message,
      code: 'custom',
    })),
  );
  if (issues.length) {
    const first = issues[0]!;
    throw new ApiError('validation_failed', `Invalid rows: ${first.path.join('.')} ${first.message} (the table follows its published form)`, {
      details: { issues: issues.slice(0, 50) },
    });
  }
}
