import { invalidReference, type Reference } from '../../platform/http/errors.js';
import { fetchPolicy } from '../media/index.js';
import { cachedSettings } from '../system/index.js';
import { requireLevel } from './access.js';
import { findSourceRow, getSourceRow, manualRowsOf, parseJson } from './data-sources.repo.js';
import { type AnyProvider, type Config, type Env, manualColumns, validateConfig } from './data-sources.service.js';
import { projectRows } from './manual-rows.js';
import { providerById } from './providers/index.js';
import type { Dataset, FetchAttempt, Row } from './providers/types.js';
import { ProviderFetchError } from './providers/types.js';
import { openSecrets, SecretUnreadableError } from './secrets.js';

/** Preview and inspect: a provider run once, nothing stored. */

export interface ProbeResult {
  dataset: Dataset | null;
  attempt: FetchAttempt | null;
  error: { code: string; message: string } | null;
}

/** Runs a provider once, nothing stored: the fetch and parse, or the table's rows. */
async function probe(env: Env, provider: AnyProvider, config: Config, timeZone: string, manualRows: () => Promise<Row[]>): Promise<ProbeResult> {
  if (!provider.fetch) {
    const columns = manualColumns(config);
    const rows = projectRows(columns, await manualRows());
    return { dataset: { columns, rows, warnings: [] }, attempt: null, error: null };
  }
  try {
    const outcome = await provider.fetch(config, {
      policy: await fetchPolicy(env.deps),
      timeZone,
      now: new Date(),
      previous: null,
      timeoutMs: env.deps.config.dataSourceTimeoutMs,
    });
    if (outcome.kind !== 'data')
      return { dataset: null, attempt: outcome.attempt, error: { code: 'unchanged', message: 'The server answered "not modified"' } };
    return { dataset: outcome.dataset, attempt: outcome.attempt, error: null };
  } catch (err) {
    if (err instanceof ProviderFetchError) return { dataset: null, attempt: err.attempt, error: { code: err.code, message: err.message } };
    throw err;
  }
}

/** An unsaved config, end to end (preview and inspect by provider); `sourceId` lends its stored secrets. */
export async function probeUnsaved(env: Env, provider: AnyProvider, body: { config: Config; sourceId?: string; timeZone?: string }): Promise<ProbeResult> {
  const db = env.deps.db;
  let stored: Config | null = null;
  if (body.sourceId) {
    const ref: Reference = { path: ['sourceId'], message: 'no data source of this provider with this id' };
    const row = await findSourceRow(db, body.sourceId);
    if (!row || row.provider !== provider.id) throw invalidReference(`No ${provider.id} data source ${body.sourceId}`, ref);
    await requireLevel(db, env.caller, row.id, 'editor', row.name);
    stored = parseJson<Config>(row.config, {});
  }
  const config = validateConfig(env.secrets, provider, body.config, stored);
  const timeZone = body.timeZone ?? (await cachedSettings(db)).timeZone;
  return probe(env, provider, config, timeZone, async () => []);
}

/** A saved source, fetched now with its stored config (nothing stored); a table answers its rows. */
export async function probeSaved(env: Env, id: string): Promise<ProbeResult> {
  const db = env.deps.db;
  const row = await getSourceRow(db, id);
  await requireLevel(db, env.caller, id, 'viewer', row.name);
  const provider = providerById(row.provider);
  if (!provider)
    return { dataset: null, attempt: null, error: { code: 'unknown_provider', message: `This server no longer offers the ${row.provider} provider` } };
  let config: Config;
  try {
    const parsed = provider.configSchema.safeParse(openSecrets(env.secrets, parseJson<Config>(row.config, {}), provider.secretPaths));
    if (!parsed.success)
      return { dataset: null, attempt: null, error: { code: 'invalid_config', message: 'The source’s settings are no longer valid; edit the source' } };
    config = parsed.data as Config;
  } catch (err) {
    if (err instanceof SecretUnreadableError) return { dataset: null, attempt: null, error: { code: 'secret_unreadable', message: err.message } };
    throw err;
  }
  return probe(env, provider, config, row.time_zone, () => manualRowsOf(db, id));
}

const clipExample = (cell: string | number | boolean) => (typeof cell === 'string' && cell.length > 200 ? `${cell.slice(0, 200)}…` : cell);

/** The fields of a dataset with their types, up to three different example values and how often they are empty. */
export function fieldsOf(dataset: Dataset) {
  return dataset.columns.map((c) => {
    const examples: (string | number | boolean)[] = [];
    const seen = new Set<string>();
    let empty = 0;
    for (const row of dataset.rows) {
      const cell = row[c.name] ?? null;
      if (cell === null || cell === '') {
        empty++;
        continue;
      }
      const key = JSON.stringify(cell);
      if (examples.length < 3 && !seen.has(key)) {
        seen.add(key);
        examples.push(clipExample(cell));
      }
    }
    return { name: c.name, type: c.type, examples, emptyCount: empty };
  });
}
