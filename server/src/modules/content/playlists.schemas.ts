/** The playlists' request and answer shapes (zod: validation and the OpenAPI document). */
import { z } from 'zod';
import { Instant } from './common.js';

export const MAX_ITEMS_PER_PLAYLIST = 2000;

const Hhmm = z.string().regex(/^(([01]\d|2[0-3]):[0-5]\d|24:00)$/, 'a time HH:MM (00:00-24:00)');
export const DaypartSchema = z
  .object({
    days: z.array(z.number().int().min(1).max(7)).min(1).max(7).describe('ISO weekdays, 1 = Monday .. 7 = Sunday'),
    from: Hhmm,
    to: Hhmm.describe('at or before `from` means the part runs over midnight; 24:00 is the end of the day'),
  })
  .refine((d) => d.from !== '24:00', { message: 'from cannot be 24:00', path: ['from'] })
  .meta({ id: 'Daypart' });

export const TRANSITIONS = ['none', 'fade', 'slide'] as const;
export const TransitionSchema = z
  .object({ type: z.enum(TRANSITIONS), durationMs: z.number().int().min(0).max(10_000).default(500) })
  .meta({ id: 'Transition' });

/** Fields an item has whatever it shows. */
export const ItemFields = z.object({
  durationMs: z
    .number()
    .int()
    .min(500)
    .max(86_400_000)
    .nullable()
    .optional()
    .describe('null: a video’s or audio’s own length, 30 s for a website, else 10 s. Not for nested-playlist items (400): they play their playlist’s length'),
  transition: TransitionSchema.optional(),
  validFrom: Instant.nullable().optional(),
  validUntil: Instant.nullable().optional(),
  dayparts: z.array(DaypartSchema).max(28).optional(),
  enabled: z.boolean().optional(),
});
export type ItemPatch = z.output<typeof ItemFields>;

export const NewItemSchema = ItemFields.extend({
  assetId: z.uuid().optional(),
  widgetId: z.uuid().optional(),
  playlistId: z.uuid().optional(),
  position: z.number().int().min(0).max(MAX_ITEMS_PER_PLAYLIST).optional().describe('0-based insert position; default: at the end'),
});
export type NewItem = z.output<typeof NewItemSchema>;

export const TagRuleSchema = z
  .object({
    tags: z.array(z.string().trim().min(1).max(64)).max(50),
    match: z.enum(['any', 'all']).default('any'),
    order: z.enum(['name', 'newest', 'oldest']).default('name'),
    durationMs: z.number().int().min(500).max(86_400_000).nullable().default(null),
    limit: z.number().int().min(1).max(500).nullable().default(null),
  })
  .meta({ id: 'TagRule' });
export type TagRule = z.output<typeof TagRuleSchema>;

export const ItemDto = z
  .object({
    id: z.string(),
    position: z.number(),
    type: z.enum(['asset', 'widget', 'playlist']),
    assetId: z.string().nullable(),
    widgetId: z.string().nullable(),
    playlistId: z.string().nullable().describe('the nested playlist this item plays'),
    label: z.string().nullable().describe('the asset’s, widget’s or nested playlist’s name'),
    assetKind: z.string().nullable(),
    assetState: z.string().nullable(),
    durationMs: z.number().nullable(),
    effectiveDurationMs: z.number(),
    transition: z.object({ type: z.enum(TRANSITIONS), durationMs: z.number() }),
    validFrom: z.string().nullable(),
    validUntil: z.string().nullable(),
    dayparts: z.array(z.object({ days: z.array(z.number()), from: z.string(), to: z.string() })),
    enabled: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'PlaylistItem' });
export type ItemDto = z.infer<typeof ItemDto>;

const TagRuleDto = z.object({
  tags: z.array(z.string()),
  match: z.enum(['any', 'all']),
  order: z.enum(['name', 'newest', 'oldest']),
  durationMs: z.number().nullable(),
  limit: z.number().nullable(),
});

/** What screens play (issue 20): the playlist's current publication, or null (never published: plays nothing). */
export const PublicationRefDto = z
  .object({ id: z.string(), number: z.number(), publishedAt: z.string(), publishedBy: z.string().nullable() })
  .meta({ id: 'PublicationRef' });

export const PlaylistSummaryDto = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    revision: z.number(),
    tagRule: TagRuleDto.nullable(),
    itemCount: z.number(),
    createdAt: z.string(),
    updatedAt: z.string(),
    publication: PublicationRefDto.nullable().describe('what screens play; null: never published, screens play nothing of it'),
    unpublishedChanges: z.boolean().describe('the draft (this answer) differs from what screens play; always false while approvals are off'),
  })
  .meta({ id: 'PlaylistSummary' });

export const PlaylistDto = PlaylistSummaryDto.extend({
  items: z.array(ItemDto),
  durationMs: z
    .number()
    .describe('one pass: the enabled items’ effective durations (a nested playlist counts its own pass) plus the tag rule’s current matches'),
}).meta({ id: 'Playlist' });
export type PlaylistDto = z.infer<typeof PlaylistDto>;
