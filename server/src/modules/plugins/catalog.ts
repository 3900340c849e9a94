/**
 * The built-in plugins (issue 22, docs/plugins.md): no code is loaded from outside. Each has an
 * instance config schema (zod; defaults filled on write) published as JSON Schema in the
 * catalog. `overlay-core` draws the overlay layer in the browser player: the three overlay
 * plugins require it, so the dependency rules are real.
 */
import { z } from 'zod';

const Colour = z
  .string()
  .regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/, 'a colour: #rgb, #rrggbb or #rrggbbaa')
  .describe('#rgb, #rrggbb or #rrggbbaa');
const Corner = z.enum(['top-left', 'top-right', 'bottom-left', 'bottom-right']);

export const CountdownBarConfig = z.object({
  target: z.discriminatedUnion('type', [
    z.object({ type: z.literal('at'), at: z.iso.datetime({ offset: true }).describe('the moment the bar reaches zero') }),
    z.object({
      type: z.literal('daily'),
      time: z
        .string()
        .regex(/^(?:[01]\d|2[0-3]):[0-5]\d$/, 'a time HH:MM')
        .describe('HH:MM in the screen’s time zone'),
      weekdays: z.array(z.number().int().min(1).max(7)).min(1).max(7).optional().describe('ISO weekdays (1 = Monday); absent: every day'),
    }),
  ]),
  label: z.string().max(120).default(''),
  windowMin: z.number().int().min(1).max(1440).default(60).describe('the bar appears this many minutes before the target and shrinks to zero at it'),
  position: z.enum(['top', 'bottom']).default('bottom'),
  heightPct: z.number().min(2).max(20).default(6),
  colors: z.object({ bar: Colour.default('#e4572e'), background: Colour.default('#00000099'), text: Colour.default('#ffffff') }).prefault({}),
  afterZero: z
    .object({
      show: z.enum(['hide', 'message', 'count-up']).default('hide'),
      text: z.string().max(120).default('Time!'),
      forMin: z.number().int().min(0).max(1440).default(5),
    })
    .prefault({}),
});

export const BrandBugConfig = z.object({
  assetId: z
    .uuid()
    .transform((s) => s.toLowerCase())
    .describe('an image asset (SVG included)'),
  corner: Corner.default('top-right'),
  sizePct: z.number().min(2).max(50).default(12).describe('logo width in % of the screen width; the height keeps the aspect'),
  marginPct: z.number().min(0).max(20).default(2),
  opacity: z.number().min(0).max(1).default(0.85),
  hideDuringFullScreenVideo: z.boolean().default(false),
});

export const NoiseMeterConfig = z
  .object({
    warningLevel: z.number().min(0).max(100).default(60),
    loudLevel: z.number().min(0).max(100).default(75).describe('must be above warningLevel'),
    display: z.enum(['bar', 'dial', 'traffic-light', 'hidden']).default('bar'),
    corner: Corner.default('bottom-right'),
    sizePct: z.number().min(5).max(50).default(18),
    loudMessage: z.string().max(200).default('Too loud! Please lower your voices.'),
    calibrationOffset: z.number().min(-50).max(50).default(0).describe('added to the measured level before clamping to 0..100'),
    microphone: z
      .object({
        deviceLabel: z.string().max(200).default('').describe('empty: the default microphone; else the first input whose label contains it (any case)'),
        echoCancellation: z.boolean().default(false),
        noiseSuppression: z.boolean().default(false),
        autoGainControl: z.boolean().default(false),
      })
      .prefault({}),
  })
  .refine((c) => c.loudLevel > c.warningLevel, { path: ['loudLevel'], message: 'loudLevel must be above warningLevel' });

/** The plugins that have instances (one set of instance routes each). */
export const INSTANCE_PLUGINS = ['countdown-bar', 'brand-bug', 'noise-meter'] as const;
export type InstancePluginId = (typeof INSTANCE_PLUGINS)[number];

export interface CatalogPlugin {
  id: string;
  name: string;
  version: string;
  description: string;
  requires: readonly string[];
  /** The instance config (null: the plugin has no instances). */
  config: z.ZodType | null;
  playerFamilies: readonly string[];
}

const WEB = ['web'] as const;

export const CATALOG: readonly CatalogPlugin[] = [
  {
    id: 'overlay-core',
    name: 'Overlay layer',
    version: '1.0.0',
    description: 'Overlay layer: draws plugin overlays above the content in the browser player',
    requires: [],
    config: null,
    playerFamilies: WEB,
  },
  {
    id: 'countdown-bar',
    name: 'Countdown bar',
    version: '1.0.0',
    description: 'A bar that shrinks to zero at a target time (once, or daily in the screen’s time zone), with a label and what to show after zero',
    requires: ['overlay-core'],
    config: CountdownBarConfig,
    playerFamilies: WEB,
  },
  {
    id: 'brand-bug',
    name: 'Brand bug',
    version: '1.0.0',
    description: 'A logo (an image or SVG asset) in a corner above the content, cached for offline play',
    requires: ['overlay-core'],
    config: BrandBugConfig,
    playerFamilies: WEB,
  },
  {
    id: 'noise-meter',
    name: 'Noise meter',
    version: '1.0.0',
    description: 'Measures the room’s sound level with the screen’s microphone, shows it, warns when loud, and reports it for the noise history',
    requires: ['overlay-core'],
    config: NoiseMeterConfig,
    playerFamilies: WEB,
  },
];

export const catalogPlugin = (id: string): CatalogPlugin | undefined => CATALOG.find((p) => p.id === id);

/** The config schema of an instance plugin. */
export function configSchemaOf(pluginId: InstancePluginId): z.ZodType {
  return catalogPlugin(pluginId)!.config!;
}

/** The config's JSON Schema (its input: what a client may send, defaults shown). */
export function jsonSchemaOf(schema: z.ZodType | null): Record<string, unknown> | null {
  return schema ? (z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>) : null;
}
