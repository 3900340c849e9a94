import { api, ApiError } from '../../api';
import type { operations } from '../../api-schema';
import type { Config, Json } from '../data/model';
import { cleanConfig, type JsonSchema } from '../data/schema-form';
import type { View } from '../data/shared';

/** The widget pages' shapes (the contract of issue 19: docs/widgets.md) and what they send. */

type DataOf<Op extends keyof operations> = operations[Op]['responses'] extends { 200: { content: { 'application/json': { data: infer D } } } } ? D : never;

/** The server's own shapes (api-schema.ts, generated from the routes). */
export type Widget = DataOf<'getWidgetsById'>;
export type WidgetError = Widget['errors'][number];
export type Binding = { sourceId: string; view: View | null };
/** A widget type, its settings' JSON Schema as the schema form reads it. */
export type WidgetType = Omit<DataOf<'getWidgetTypes'>['types'][number], 'settingsSchema'> & { settingsSchema: JsonSchema };
export type CompileResult = DataOf<'postWidgetsCompilePreview'>;

/** What the editor holds until it is saved. */
export interface Draft {
  name: string;
  type: string;
  settings: Config;
  template: string;
  binding: Binding | null;
}

export const draftOf = (w: Widget): Draft => ({
  name: w.name,
  type: w.type,
  settings: (w.settings ?? {}) as Config,
  template: w.template ?? '',
  binding: w.binding ? { sourceId: w.binding.sourceId, view: w.binding.view ?? null } : null,
});

/** The body of POST /widgets, PATCH /widgets/{id} and compile-preview. */
export function bodyOf(d: Draft): Record<string, Json | Binding | null> {
  return {
    name: d.name.trim() || 'Untitled widget',
    type: d.type,
    settings: (cleanConfig(d.settings) as Config | undefined) ?? {},
    template: d.type === 'custom' ? d.template : null,
    binding: d.binding ? { sourceId: d.binding.sourceId, view: d.binding.view } : null,
  };
}

/** Template errors of a 400 (details.errors), if that is what it was. */
export function templateErrorsOf(err: unknown): WidgetError[] {
  if (!(err instanceof ApiError)) return [];
  const errors = (err.details as { errors?: WidgetError[] } | undefined)?.errors;
  return Array.isArray(errors) ? errors : [];
}

/** The widget types (they do not change while the server runs). */
let types: Promise<WidgetType[]> | null = null;
export function loadTypes(): Promise<WidgetType[]> {
  types ??= api.get<{ types: WidgetType[] }>('widget-types').then(
    (t) => t.types,
    (err) => {
      types = null;
      throw err;
    },
  );
  return types;
}

/** The zone sizes the preview offers (a layout zone's size is typed as Custom). */
export const SIZES = [
  { label: '1920 × 1080 (full HD landscape)', w: 1920, h: 1080 },
  { label: '1080 × 1920 (portrait)', w: 1080, h: 1920 },
  { label: '800 × 450 (a zone)', w: 800, h: 450 },
];

/** The widget's kind in words. */
export const typeName = (all: WidgetType[] | undefined, type: string) => all?.find((t) => t.type === type)?.title ?? type;
