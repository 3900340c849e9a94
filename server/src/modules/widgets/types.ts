import { z } from 'zod';

/**
 * The built-in widget types (issue 19, docs/widgets.md "Types"): each one is a Liquid
 * template, its CSS and a zod settings schema, compiled by the one compiler (compiler.ts)
 * the `custom` type uses too. Templates see `settings`, `rows`, `columns`, `now` (ISO),
 * `source` (the bound source's name) and what the type's `prepare` adds (the table's
 * formatted cells, the QR code's SVG). Output is HTML-escaped unless `| raw`.
 */

/** A CSS colour: a name, #hex, rgb()/hsl() — no quotes, semicolons or braces. */
const color = z
  .string()
  .max(64)
  .regex(/^[#a-zA-Z0-9(),.% -]+$/, 'a CSS colour (name, #hex, rgb(), hsl())');
const fontFamily = z
  .string()
  .max(200)
  .regex(/^[a-zA-Z0-9 ,'-]+$/, 'font family names separated by commas');

/** Settings every type takes. */
const base = {
  background: color.optional().describe('Background colour (CSS)'),
  color: color.optional().describe('Text colour (CSS)'),
  fontFamily: fontFamily.optional(),
  fontSizePx: z.number().int().min(6).max(1000).optional(),
  durationMs: z.number().int().min(1000).max(86_400_000).nullable().optional().describe('Default play time in a playlist (null: the playlist’s 10 s)'),
  lang: z
    .string()
    .max(35)
    .regex(/^[a-zA-Z]{2,8}(-[a-zA-Z0-9]{1,8})*$/)
    .optional()
    .describe('BCP 47 language of the document; dates use the screen’s locale when absent'),
};

const columnName = z.string().min(1).max(200);

const numberFormat = z.object({
  type: z.enum(['text', 'number', 'money']).default('text'),
  decimals: z.number().int().min(0).max(6).optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, 'an ISO 4217 code such as EUR')
    .optional(),
  grouping: z.boolean().optional().describe('Thousands separators'),
  symbolBefore: z.boolean().optional().describe('€15.00 instead of 15.00 €'),
});

export const SETTINGS = {
  clock: z.object({
    ...base,
    show: z.enum(['time', 'date', 'datetime']).default('time'),
    hour12: z.boolean().default(false),
    seconds: z.boolean().default(false),
    dateStyle: z.enum(['full', 'long', 'medium', 'short']).default('full'),
  }),
  text: z.object({ ...base, text: z.string().max(20_000).default(''), align: z.enum(['left', 'center', 'right']).default('center') }),
  ticker: z.object({
    ...base,
    text: z.string().max(20_000).default('').describe('The text, or empty to scroll the rows’ `column`'),
    column: columnName.optional(),
    separator: z.string().max(20).default(' • '),
    speedPxPerSec: z.number().min(5).max(2000).default(80),
  }),
  qr: z.object({
    ...base,
    value: z.string().min(1).max(2000).default('https://example.org'),
    label: z.string().max(500).default(''),
    dark: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/)
      .default('#000000'),
    light: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/)
      .default('#ffffff'),
  }),
  countdown: z.object({
    ...base,
    target: z.iso.datetime({ offset: true }).default('2030-01-01T00:00:00Z'),
    label: z.string().max(500).default(''),
    after: z.enum(['zero', 'text', 'hide']).default('zero').describe('What shows once the target passed'),
    afterText: z.string().max(500).default(''),
  }),
  table: z.object({
    ...base,
    title: z.string().max(500).default(''),
    columns: z
      .array(z.object({ name: columnName, heading: z.string().max(200).optional(), format: numberFormat.optional() }))
      .max(50)
      .default([])
      .describe('The columns shown, in order (empty: every column as text)'),
    groupBy: columnName.nullable().default(null).describe('Rows grouped under this column’s values'),
    headings: z.boolean().default(true),
    rowsPerPage: z.number().int().min(1).max(500).default(12),
    pageMs: z.number().int().min(1000).max(600_000).default(8000),
  }),
  'feed-list': z.object({
    ...base,
    title: z.string().max(500).default(''),
    fields: z
      .object({
        title: columnName.default('title'),
        summary: columnName.default('summary'),
        image: columnName.default('image'),
        published: columnName.default('published'),
      })
      .default({ title: 'title', summary: 'summary', image: 'image', published: 'published' }),
    limit: z.number().int().min(1).max(100).default(6),
  }),
  agenda: z.object({
    ...base,
    title: z.string().max(500).default(''),
    fields: z
      .object({
        start: columnName.default('start'),
        end: columnName.default('end'),
        title: columnName.default('title'),
        location: columnName.default('location'),
      })
      .default({ start: 'start', end: 'end', title: 'title', location: 'location' }),
    limit: z.number().int().min(1).max(200).default(20),
  }),
  carousel: z.object({
    ...base,
    imageColumn: columnName.default('image'),
    captionColumn: columnName.nullable().default(null),
    intervalMs: z.number().int().min(1000).max(600_000).default(6000),
    fit: z.enum(['cover', 'contain']).default('cover'),
  }),
  custom: z.object({ ...base, css: z.string().max(100_000).default('') }).catchall(z.unknown()),
} as const;

export type WidgetType = keyof typeof SETTINGS;
export const WIDGET_TYPES = Object.keys(SETTINGS) as WidgetType[];
export const isWidgetType = (t: string): t is WidgetType => Object.hasOwn(SETTINGS, t);

export const TYPE_INFO: Record<WidgetType, { title: string; description: string; usesData: boolean }> = {
  clock: { title: 'Clock', description: 'Time and/or date in the screen’s time zone', usesData: false },
  text: { title: 'Text', description: 'Static text', usesData: false },
  ticker: { title: 'Ticker', description: 'Scrolling text, or a column of the bound rows', usesData: true },
  qr: { title: 'QR code', description: 'A QR code drawn on the server (SVG)', usesData: false },
  countdown: { title: 'Countdown', description: 'Time left until a moment', usesData: false },
  table: { title: 'Table / menu board', description: 'Rows of a data source, formatted per column, grouped and paged', usesData: true },
  'feed-list': { title: 'Feed list', description: 'Title, summary, image and date of RSS-like rows', usesData: true },
  agenda: { title: 'Agenda', description: 'Calendar events grouped by day in the screen’s zone', usesData: true },
  carousel: { title: 'Image carousel', description: 'The images of a view’s image column, one after another', usesData: true },
  custom: { title: 'Custom', description: 'Your own Liquid HTML template and CSS', usesData: true },
};

/** The Liquid template of each built-in type (custom brings its own). */
export const TEMPLATES: Record<Exclude<WidgetType, 'custom'>, string> = {
  clock: `<div class="pl-fill pl-center"><div class="pl-clock" data-show="{{ settings.show }}" data-hour12="{{ settings.hour12 }}" data-seconds="{{ settings.seconds }}" data-date-style="{{ settings.dateStyle }}">&nbsp;</div></div>`,
  text: `<div class="pl-fill pl-center pl-text" style="text-align:{{ settings.align }}">{{ settings.text | newline_to_br }}</div>`,
  ticker: `<div class="pl-fill pl-ticker" data-speed="{{ settings.speedPxPerSec }}"><div class="pl-ticker-track">{% if settings.text != "" %}<span>{{ settings.text }}</span>{% else %}{% for row in rows %}<span>{{ row[settings.column] }}</span>{% unless forloop.last %}<span class="pl-sep">{{ settings.separator }}</span>{% endunless %}{% endfor %}{% endif %}</div></div>`,
  qr: `<div class="pl-fill pl-center pl-qr"><div class="pl-qr-code">{{ qrSvg | raw }}</div>{% if settings.label != "" %}<div class="pl-qr-label">{{ settings.label }}</div>{% endif %}</div>`,
  countdown: `<div class="pl-fill pl-center pl-countdown" data-target="{{ settings.target }}" data-after="{{ settings.after }}" data-after-text="{{ settings.afterText }}">{% if settings.label != "" %}<div class="pl-countdown-label">{{ settings.label }}</div>{% endif %}<div class="pl-countdown-value">–</div></div>`,
  table: `<div class="pl-fill pl-table" data-page-ms="{{ settings.pageMs }}">{% if settings.title != "" %}<h1>{{ settings.title }}</h1>{% endif %}<table>{% if settings.headings %}<thead><tr>{% for h in table.headings %}<th class="pl-{{ h.kind }}">{{ h.text }}</th>{% endfor %}</tr></thead>{% endif %}{% for page in table.pages %}<tbody class="pl-page">{% for line in page %}{% if line.group %}<tr class="pl-group"><th colspan="{{ table.headings.size }}">{{ line.group }}</th></tr>{% else %}<tr>{% for cell in line.cells %}<td class="pl-{{ cell.kind }}">{{ cell.text }}</td>{% endfor %}</tr>{% endif %}{% endfor %}</tbody>{% endfor %}</table></div>`,
  'feed-list': `<div class="pl-fill pl-feed">{% if settings.title != "" %}<h1>{{ settings.title }}</h1>{% endif %}<ul>{% for row in rows limit: settings.limit %}<li>{% assign img = row[settings.fields.image] %}{% if img %}<img src="{{ img }}" alt="">{% endif %}<div><h2>{{ row[settings.fields.title] }}</h2>{% assign published = row[settings.fields.published] %}{% if published %}<time class="pl-date" datetime="{{ published }}">{{ published | slice: 0, 10 }}</time>{% endif %}<p>{{ row[settings.fields.summary] | strip_html | truncate: 300 }}</p></div></li>{% endfor %}</ul></div>`,
  agenda: `<div class="pl-fill pl-agenda">{% if settings.title != "" %}<h1>{{ settings.title }}</h1>{% endif %}<ol>{% for row in rows limit: settings.limit %}<li data-start="{{ row[settings.fields.start] }}" data-end="{{ row[settings.fields.end] }}"><span class="pl-when"></span> <strong>{{ row[settings.fields.title] }}</strong>{% assign where = row[settings.fields.location] %}{% if where %} <span class="pl-where">{{ where }}</span>{% endif %}</li>{% endfor %}</ol></div>`,
  carousel: `<div class="pl-fill pl-carousel" data-interval="{{ settings.intervalMs }}">{% for row in rows %}{% assign img = row[settings.imageColumn] %}{% if img %}<figure class="pl-slide"><img src="{{ img }}" alt="" style="object-fit:{{ settings.fit }}">{% if settings.captionColumn %}<figcaption>{{ row[settings.captionColumn] }}</figcaption>{% endif %}</figure>{% endif %}{% endfor %}</div>`,
};

/** The CSS of each type (after the base CSS, before a custom widget's own). */
export const TYPE_CSS: Record<WidgetType, string> = {
  clock: '.pl-clock{font-size:12vmin;font-variant-numeric:tabular-nums}',
  text: '.pl-text{white-space:normal;padding:2vmin;box-sizing:border-box}',
  ticker:
    '.pl-ticker{display:flex;align-items:center;white-space:nowrap}.pl-ticker-track{display:inline-block;padding-left:100%;will-change:transform}.pl-sep{opacity:.6}',
  qr: '.pl-qr{flex-direction:column}.pl-qr-code{width:80vmin;height:80vmin}.pl-qr-code svg{width:100%;height:100%}.pl-qr-label{margin-top:2vmin}',
  countdown: '.pl-countdown{flex-direction:column}.pl-countdown-value{font-size:12vmin;font-variant-numeric:tabular-nums}',
  table:
    '.pl-table{padding:2vmin;box-sizing:border-box}.pl-table table{width:100%;border-collapse:collapse}.pl-table td,.pl-table th{padding:.3em .5em;text-align:left}.pl-table .pl-number,.pl-table .pl-money{text-align:right;font-variant-numeric:tabular-nums}.pl-group th{padding-top:.8em;border-bottom:1px solid currentColor}',
  'feed-list':
    '.pl-feed{padding:2vmin;box-sizing:border-box}.pl-feed ul{list-style:none;margin:0;padding:0}.pl-feed li{display:flex;gap:1em;margin-bottom:1em}.pl-feed img{width:20%;object-fit:cover}.pl-feed h2{margin:0;font-size:1.1em}.pl-feed p{margin:.2em 0}',
  agenda:
    '.pl-agenda{padding:2vmin;box-sizing:border-box}.pl-agenda ol{list-style:none;margin:0;padding:0}.pl-agenda .pl-day{font-weight:bold;margin-top:.8em}',
  carousel:
    '.pl-carousel{position:relative}.pl-slide{position:absolute;inset:0;margin:0;opacity:0;transition:opacity .8s}.pl-slide.pl-on{opacity:1}.pl-slide img{width:100%;height:100%}.pl-slide figcaption{position:absolute;bottom:0;left:0;right:0;padding:1em;background:rgba(0,0,0,.5);color:#fff}',
  custom: '',
};

export const BASE_CSS =
  'html,body{margin:0;width:100%;height:100%;overflow:hidden}body{font-family:system-ui,sans-serif}.pl-fill{width:100%;height:100%;overflow:hidden}.pl-center{display:flex;align-items:center;justify-content:center;text-align:center}';

/** The default template a new custom widget gets. */
export const CUSTOM_EXAMPLE = '<div class="pl-fill">\n  <h1>{{ source }}</h1>\n  <ul>{% for row in rows %}<li>{{ row | json }}</li>{% endfor %}</ul>\n</div>';

const jsonSchema = (schema: z.ZodType): Record<string, unknown> => {
  const out = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', ...out };
};

/** Settings of a type as JSON Schema (GET /widget-types, content-definitions). Computed once. */
let TYPE_LIST: ReturnType<typeof computeTypeList> | undefined;
function computeTypeList() {
  return WIDGET_TYPES.map((type) => ({
    type,
    ...TYPE_INFO[type],
    settingsSchema: jsonSchema(SETTINGS[type]),
    template: type === 'custom' ? CUSTOM_EXAMPLE : null,
  }));
}
export const widgetTypeList = () => {
  TYPE_LIST ??= computeTypeList();
  return TYPE_LIST;
};

const Placement = z.object({
  widgetId: z.uuid().describe('A widget of this type'),
  durationMs: z.number().int().min(1000).max(86_400_000).optional().describe('How long it shows in a playlist; default the widget’s own, else 10 s'),
});

/** The widget:<type> entries of GET /content-definitions. */
export function widgetDefinitions() {
  const schema = jsonSchema(Placement);
  return widgetTypeList().map((t) => ({
    id: `widget:${t.type}`,
    category: 'widget' as const,
    name: t.title,
    description: `${t.description}: a playlist item or a layout zone {type: 'widget', widgetId}`,
    schema,
    settingsSchema: t.settingsSchema,
  }));
}
