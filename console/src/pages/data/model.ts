import type { components, operations } from '../../api-schema';

/** The Data pages' shapes: the server's own (api-schema.ts, generated from the routes). */

type Schemas = components['schemas'];
/** The `data` of an operation's 200 answer, as the server declares it. */
type DataOf<Op extends keyof operations> = operations[Op]['responses'] extends { 200: { content: { 'application/json': { data: infer D } } } } ? D : never;
type BodyOf<Op extends keyof operations> = operations[Op] extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

export type DataSource = Schemas['DataSource'];
export type DataColumn = Schemas['DataColumn'];
export type ColumnType = DataColumn['type'];
export type FetchAttempt = Schemas['DataFetchAttempt'];
export type Provider = DataOf<'getProviderCatalog'>['providers'][number];
export type Preview = DataOf<'postDataSourcesByProviderPreview'>;
export type Inspect = DataOf<'postDataSourcesByProviderInspect'>;
export type Diagnostics = DataOf<'getDataSourcesByIdDiagnostics'>;
export type ViewPreview = DataOf<'postDataSourcesByIdViewsPreview'>;
export type View = BodyOf<'postDataSourcesByIdViewsPreview'>;
export type ViewFilter = NonNullable<View['filter']>[number];
export type Access = DataOf<'getDataSourcesByIdAccess'>;
export type Grant = Access['items'][number];
export type AccessLevel = Access['myAccess'];
export type Outputs = DataOf<'getDataSourcesByIdOutputs'>;
export type DirectoryEntry = DataOf<'getDataSourcesByIdUserDirectory'>['items'][number];
export type Cell = string | number | boolean | null;
export type Row = Record<string, Cell>;

/** A JSON value as the config form edits it. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type Config = Record<string, Json>;

const LEVEL_RANK: Record<AccessLevel, number> = { viewer: 0, editor: 1, owner: 2 };
/** The caller's access to a source is at least `level`. */
export const can = (source: { myAccess: AccessLevel }, level: AccessLevel) => LEVEL_RANK[source.myAccess] >= LEVEL_RANK[level];

export const COLUMN_TYPE_WORDS: Record<ColumnType, string> = {
  text: 'Text',
  number: 'Number',
  boolean: 'Yes / no',
  date: 'Date',
  datetime: 'Date and time',
  url: 'Link',
  image: 'Image address',
  richtext: 'Rich text',
};
