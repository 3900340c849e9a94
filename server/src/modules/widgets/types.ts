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
  text: `<div class="pl-fill pl-center pl-text pl-fit" style="text-align:{{ settings.align }}">{{ settings.text | escape | newline_to_br | raw }}</div>`,
  ticker: `<div class="pl-fill pl-ticker" data-speed="{{ settings.speedPxPerSec }}"><div class="pl-ticker-track">{% if settings.text != "" %}<span>{{ settings.text }}</span>{% else %}{% for row in rows %}<span>{{ row[settings.column] }}</span>{% unless forloop.last %}<span class="pl-sep">{{ settings.separator }}</span>{% endunless %}{% endfor %}{% endif %}</div></div>`,
  qr: `<div class="pl-fill pl-center pl-qr"><div class="pl-qr-code">{{ qrSvg | raw }}</div>{% if settings.label != "" %}<div class="pl-qr-label">{{ settings.label }}</div>{% endif %}</div>`,
  countdown: `<div class="pl-fill pl-center pl-countdown" data-target="{{ settings.target }}" data-after="{{ settings.after }}" data-after-text="{{ settings.afterText }}">{% if settings.label != "" %}<div class="pl-countdown-label">{{ settings.label }}</div>{% endif %}<div class="pl-countdown-value">–</div></div>`,
  table: `<div class="pl-fill pl-table" data-page-ms="{{ settings.pageMs }}" style="--pl-lines:{{ table.lines }};--pl-cols:{{ table.cols }}">{% if settings.title != "" %}<h1>{{ settings.title }}</h1>{% endif %}<table>{% if settings.headings %}<thead><tr>{% for h in table.headings %}<th class="pl-{{ h.kind }}">{{ h.text }}</th>{% endfor %}</tr></thead>{% endif %}{% for page in table.pages %}<tbody class="pl-page">{% for line in page %}{% if line.group %}<tr class="pl-group"><th colspan="{{ table.headings.size }}">{{ line.group }}</th></tr>{% else %}<tr>{% for cell in line.cells %}<td class="pl-{{ cell.kind }}">{{ cell.text }}</td>{% endfor %}</tr>{% endif %}{% endfor %}</tbody>{% endfor %}</table></div>`,
  'feed-list': `<div class="pl-fill pl-feed pl-fit">{% if settings.title != "" %}<h1>{{ settings.title }}</h1>{% endif %}<ul>{% for row in rows limit: settings.limit %}<li>{% assign img = row[settings.fields.image] %}{% if img %}<img src="{{ img }}" alt="">{% endif %}<div><h2>{{ row[settings.fields.title] }}</h2>{% assign published = row[settings.fields.published] %}{% if published %}<time class="pl-date" datetime="{{ published }}">{{ published | slice: 0, 10 }}</time>{% endif %}<p>{{ row[settings.fields.summary] | strip_html | truncate: 300 }}</p></div></li>{% endfor %}</ul></div>`,
  agenda: `<div class="pl-fill pl-agenda pl-fit">{% if settings.title != "" %}<h1>{{ settings.title }}</h1>{% endif %}<ol>{% for row in rows limit: settings.limit %}<li data-start="{{ row[settings.fields.start] }}" data-end="{{ row[settings.fields.end] }}"><span class="pl-when"></span> <strong>{{ row[settings.fields.title] }}</strong>{% assign where = row[settings.fields.location] %}{% if where %} <span class="pl-where">{{ where }}</span>{% endif %}</li>{% endfor %}</ol></div>`,
  carousel: `<div class="pl-fill pl-carousel" data-interval="{{ settings.intervalMs }}">{% for row in rows %}{% assign img = row[settings.imageColumn] %}{% if img %}<figure class="pl-slide"><img src="{{ img }}" alt="" style="object-fit:{{ settings.fit }}">{% if settings.captionColumn %}<figcaption>{{ row[settings.captionColumn] }}</figcaption>{% endif %}</figure>{% endif %}{% endfor %}</div>`,
};

/**
 * The CSS of each type (after the base CSS, before a custom widget's own). Sizes come from the
 * zone: the bundle fills its viewport, which is the zone, so vh/vw/vmin are the zone's. Every
 * built-in size reads `var(--pl-size, <automatic>)`: an explicit fontSizePx sets --pl-size on
 * the body (bundleDocument) and wins everywhere; without it the automatic size applies, and
 * the runtime shrinks text, feed-list and agenda (`.pl-fit`) until their content fits.
 * The table: --pl-lines (the tallest page's rows and group headings, plus title and heading
 * row) share the zone's height; the font is half a line, capped by 8vmin and by the width a
 * column gets (--pl-cols), a line at most 2.6 times the font (docs/widgets.md "Sizing").
 */
export const TYPE_CSS: Record<WidgetType, string> = {
  clock:
    '.pl-clock{font-size:var(--pl-size,min(30vh,15vw));line-height:1.1;font-variant-numeric:tabular-nums;font-weight:600}.pl-clock[data-show=date],.pl-clock[data-show=datetime]{font-size:var(--pl-size,min(13vh,7vw));padding:0 3vw}',
  text: '.pl-text{font-size:var(--pl-size,min(14vh,8vw));line-height:1.2;white-space:normal;padding:4vmin;box-sizing:border-box;overflow-wrap:anywhere}',
  ticker:
    '.pl-ticker{display:flex;align-items:center;white-space:nowrap;font-size:var(--pl-size,min(60vh,9vw));line-height:1.2}.pl-ticker-track{display:inline-block;padding-left:100%;will-change:transform}.pl-sep{opacity:.6}',
  qr: '.pl-qr{flex-direction:column;font-size:var(--pl-size,min(7vh,5vw));line-height:1.2}.pl-qr-code{width:min(90vw,calc(90vh - 2.8em));height:min(90vw,calc(90vh - 2.8em))}.pl-qr-code:only-child{width:90vmin;height:90vmin}.pl-qr-code svg{width:100%;height:100%;display:block}.pl-qr-label{margin-top:.4em;padding:0 3vw}',
  countdown:
    '.pl-countdown{flex-direction:column;font-size:var(--pl-size,min(25vh,12vw));line-height:1.1}.pl-countdown-label{font-size:.4em;margin-bottom:.2em;padding:0 3vw}.pl-countdown-value{font-variant-numeric:tabular-nums;font-weight:600}',
  table:
    '.pl-table{--pl-r0:calc((100vh - 4vmin) / var(--pl-lines,13));--pl-f:var(--pl-size,min(calc(var(--pl-r0) * .5),8vmin,calc(13vw / var(--pl-cols,2))));--pl-r:min(var(--pl-r0),calc(var(--pl-f) * 2.6));font-size:var(--pl-f);line-height:1.15;padding:2vmin;box-sizing:border-box}' +
    '.pl-table h1{font-size:1.4em;height:calc(var(--pl-r) * 1.4);margin:0;display:flex;align-items:center;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}' +
    '.pl-table table{width:100%;border-collapse:collapse}.pl-table td,.pl-table th{height:var(--pl-r);padding:0 .5em;box-sizing:border-box;text-align:left;vertical-align:middle}' +
    '.pl-table thead th{font-size:.75em;font-weight:600;text-transform:uppercase;letter-spacing:.06em;opacity:.75;border-bottom:2px solid currentColor}' +
    '.pl-table .pl-number,.pl-table .pl-money{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.pl-table .pl-money{font-weight:600}' +
    '.pl-table tbody tr:nth-child(even):not(.pl-group) td{background:rgba(127,127,127,.09)}' +
    '.pl-table .pl-group th{font-size:1.1em;font-weight:700;vertical-align:bottom;padding-bottom:.15em;border-bottom:1px solid currentColor}',
  'feed-list':
    '.pl-feed{font-size:var(--pl-size,min(4.5vh,3.2vw));line-height:1.2;padding:3vmin;box-sizing:border-box}.pl-feed h1{font-size:1.5em;margin:0 0 .4em}.pl-feed ul{list-style:none;margin:0;padding:0}.pl-feed li{display:flex;gap:.8em;margin-bottom:.9em}.pl-feed img{height:4.2em;width:5.6em;flex:none;object-fit:cover;border-radius:.2em}.pl-feed h2{margin:0;font-size:1.15em;line-height:1.15}.pl-feed .pl-date{font-size:.75em;opacity:.7}.pl-feed p{margin:.2em 0 0;display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:3;overflow:hidden}',
  agenda:
    '.pl-agenda{font-size:var(--pl-size,min(5.5vh,4vw));line-height:1.25;padding:3vmin;box-sizing:border-box}.pl-agenda h1{font-size:1.5em;margin:0 0 .3em}.pl-agenda ol{list-style:none;margin:0;padding:0}.pl-agenda li{padding:.15em 0}.pl-agenda .pl-day{font-weight:700;font-size:1.1em;margin-top:.6em;border-bottom:1px solid currentColor}.pl-agenda .pl-day:first-child{margin-top:0}.pl-agenda .pl-when{display:inline-block;min-width:6.2em;font-variant-numeric:tabular-nums;opacity:.8}.pl-agenda .pl-where{opacity:.7}.pl-agenda .pl-where::before{content:"· "}',
  carousel:
    '.pl-carousel{position:relative}.pl-slide{position:absolute;inset:0;margin:0;opacity:0;transition:opacity .8s}.pl-slide.pl-on{opacity:1}.pl-slide img{width:100%;height:100%;display:block}.pl-slide figcaption{position:absolute;bottom:0;left:0;right:0;padding:.5em 1em;font-size:var(--pl-size,min(6vh,4vw));line-height:1.2;background:rgba(0,0,0,.55);color:#fff}',
  custom: '',
};

export const BASE_CSS =
  'html,body{margin:0;width:100%;height:100%;overflow:hidden}body{font-family:system-ui,sans-serif}.pl-fill{width:100%;height:100%;overflow:hidden}.pl-center{display:flex;align-items:center;justify-content:center;text-align:center}.pl-fit{position:relative}';

/** The default template a new custom widget gets. */
export const CUSTOM_EXAMPLE = '<div class="pl-fill">\n  <h1>{{ source }}</h1>\n  <ul>{% for row in rows %}<li>{{ row | json }}</li>{% endfor %}</ul>\n</div>';

const jsonSchema = (schema: z.ZodType): Record<string, unknown> => {
  const out = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', ...out };
};

/** Settings of a type as JSON Schema (GET /widget-types, content-definitions). */
export function widgetTypeList() {
  return WIDGET_TYPES.map((type) => ({
    type,
    ...TYPE_INFO[type],
    settingsSchema: jsonSchema(SETTINGS[type]),
    template: type === 'custom' ? CUSTOM_EXAMPLE : null,
  }));
}

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
