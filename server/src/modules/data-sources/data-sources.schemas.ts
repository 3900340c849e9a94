import { z } from 'zod';
import { uuidParam } from '../../platform/http/route.js';
import { TimeZoneName } from '../system/index.js';
import { ACCESS_LEVELS } from './access.js';
import { MAX_MANUAL_ROWS } from './manual-rows.js';
import { providerIds } from './providers/index.js';
import { COLUMN_TYPES } from './providers/types.js';

export const TAGS = ['Data sources'];

export const ColumnDto = z.object({ name: z.string(), type: z.enum(COLUMN_TYPES) }).meta({ id: 'DataColumn' });
export const CellSchema = z.union([z.string().max(65_536), z.number(), z.boolean(), z.null()]);
export const RowSchema = z.record(z.string().max(100), CellSchema);
export const AccessLevelSchema = z.enum(ACCESS_LEVELS);

/** The provider ids as a body field: an unknown one is 400 naming the allowed ones. */
export const ProviderField = z.enum(providerIds() as [string, ...string[]]);
/** The `{provider}` path segment: any text, so an unknown one answers 404 naming the providers (not a bare 404). */
export const ProviderParams = z.object({
  provider: z
    .string()
    .min(1)
    .max(64)
    .meta({ description: `A provider id: ${providerIds().join(', ')}`, examples: providerIds() }),
});
export const IdParams = z.object({ id: uuidParam });

export const FetchAttemptDto = z
  .object({
    at: z.string(),
    url: z.string(),
    outcome: z.enum(['data', 'unchanged', 'failed']),
    status: z.number().int().nullable().describe('HTTP status; null when no answer came'),
    bytes: z.number().int(),
    latencyMs: z.number().int(),
    error: z.string().nullable(),
    errorCode: z.string().nullable(),
  })
  .meta({ id: 'DataFetchAttempt' });

export const DataSourceDto = z
  .object({
    id: z.string(),
    name: z.string(),
    provider: z.string(),
    config: z.record(z.string(), z.unknown()).describe('The provider’s config; secrets are answered as {"set": true}'),
    columns: z.array(ColumnDto),
    rowCount: z.number().int(),
    refreshIntervalSec: z.number().int().nullable().describe('null: the provider does not refresh (a table)'),
    timeZone: z.string(),
    state: z.object({
      lastFetchAt: z.string().nullable(),
      lastSuccessAt: z.string().nullable(),
      nextFetchAt: z.string().nullable(),
      stale: z.boolean(),
      error: z.string().nullable(),
    }),
    snapshot: z
      .object({ revision: z.number().int(), sha256: z.string(), fetchedAt: z.string() })
      .nullable()
      .describe('The current data: its revision changes only when the data does'),
    revision: z.number().int().describe('Changes when people change the source (If-Match)'),
    myAccess: AccessLevelSchema.describe('What the caller may do with it: viewer reads, editor changes, owner deletes and manages access'),
    createdBy: z.string().nullable(),
    updatedBy: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'DataSource' });
export type DataSourceDto = z.infer<typeof DataSourceDto>;

const ConfigBody = z
  .record(z.string(), z.unknown())
  .describe('The provider’s config (provider-catalog gives its JSON Schema); send {"set": true} to keep a stored secret');
const RowsBody = z.array(RowSchema).max(MAX_MANUAL_ROWS).describe('A table’s rows (manual-table only), replacing the ones it has');

export const CreateBody = z.object({
  name: z.string().trim().min(1).max(200),
  provider: ProviderField,
  config: ConfigBody.default({}),
  refreshIntervalSec: z
    .number()
    .int()
    .min(1)
    .max(31 * 86_400)
    .optional()
    .describe('Within the provider’s refresh bounds; default its default'),
  timeZone: TimeZoneName.optional().describe('IANA zone of the data (calendars, relative dates); default the server’s'),
  rows: RowsBody.optional(),
});
export type CreateBody = z.output<typeof CreateBody>;

export const PatchBody = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  config: ConfigBody.optional(),
  refreshIntervalSec: z
    .number()
    .int()
    .min(1)
    .max(31 * 86_400)
    .optional(),
  timeZone: TimeZoneName.optional(),
  rows: RowsBody.optional(),
});
export type PatchBody = z.output<typeof PatchBody>;

export const ProbeBody = z.object({
  config: ConfigBody.default({}),
  sourceId: uuidParam.optional().describe('Keep the stored secrets of this source where the config sends {"set": true} (editing a source)'),
  timeZone: TimeZoneName.optional(),
});

export const ProbeError = z.object({ code: z.string(), message: z.string() }).nullable().describe('Why the fetch or the parse failed; null when it worked');

export const PreviewDto = z.object({
  columns: z.array(ColumnDto),
  rows: z.array(RowSchema),
  rowCount: z.number().int().describe('Rows the config gives in all (rows holds the first ones)'),
  warnings: z.array(z.string()),
  attempt: FetchAttemptDto.nullable(),
  error: ProbeError,
});

export const InspectDto = z.object({
  fields: z.array(
    z.object({
      name: z.string(),
      type: z.enum(COLUMN_TYPES),
      examples: z.array(CellSchema).max(3).describe('Up to three different values'),
      emptyCount: z.number().int().describe('Rows where it is empty'),
    }),
  ),
  rowCount: z.number().int(),
  warnings: z.array(z.string()),
  attempt: FetchAttemptDto.nullable(),
  error: ProbeError,
});

export const DiagnosticsDto = z.object({
  sourceId: z.string(),
  provider: z.string(),
  refreshIntervalSec: z.number().int().nullable(),
  attempts: z.array(FetchAttemptDto).describe('The last fetches, newest first'),
  consecutiveFailures: z.number().int(),
  lastSuccessAt: z.string().nullable(),
  nextRunAt: z.string().nullable(),
  snapshot: z
    .object({
      revision: z.number().int(),
      sha256: z.string(),
      fetchedAt: z.string().describe('When this data first arrived'),
      ageSec: z.number().int().describe('Seconds since the data was last confirmed current'),
      rowCount: z.number().int(),
      sizeBytes: z.number().int(),
      warnings: z.array(z.string()),
    })
    .nullable(),
  stale: z.boolean(),
  staleReason: z.string().nullable(),
  usedBy: z.array(z.object({ type: z.string(), id: z.string(), name: z.string().nullable() })),
  screens: z.array(z.object({ id: z.string(), name: z.string() })).describe('The screens whose current manifest shows this source'),
  outputs: z
    .array(
      z.object({
        id: z.string(),
        viewKey: z.string().nullable(),
        revision: z.number().int(),
        sizeBytes: z.number().int(),
        rowCount: z.number().int(),
        generatedAt: z.string(),
      }),
    )
    .describe('The current output of the whole source and of each view screens use (GET .../outputs has every version)'),
  images: z
    .object({
      pending: z.number().int(),
      ready: z.number().int(),
      failed: z.number().int(),
      failures: z.array(z.object({ url: z.string(), error: z.string(), attempts: z.number().int() })).describe('The latest image problems'),
    })
    .describe('Images in rows: fetched and kept as assets so screens show them offline'),
});

export const GrantDto = z.object({
  userId: z.string(),
  displayName: z.string(),
  role: z.string(),
  level: AccessLevelSchema,
  grantedBy: z.string().nullable(),
  updatedAt: z.string(),
});

export const AccessDto = z.object({
  items: z.array(GrantDto),
  nextCursor: z.string().nullable(),
  myAccess: AccessLevelSchema,
  defaults: z
    .object({ owner: AccessLevelSchema, admin: AccessLevelSchema, publisher: AccessLevelSchema, editor: AccessLevelSchema, viewer: AccessLevelSchema })
    .describe('The level of each role without a grant'),
});

export const AccessBody = z.object({
  level: AccessLevelSchema.nullable().describe('The grant to set; null clears it (the role’s default applies again)'),
});

/** Who the caller may grant: nothing more than this (no email, no activity), whoever asks. */
export const DirectoryEntryDto = z.object({ id: z.string(), displayName: z.string(), role: z.string() }).strict();
