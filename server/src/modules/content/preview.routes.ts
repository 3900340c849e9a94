import { windowSource } from './windows.js';
import { z } from 'zod';
import { defineRoute, ok, uuidParam as Uuid } from '../../platform/http/route.js';
import { Instant } from './common.js';
import { previewTimeline } from './preview.service.js';

const PreviewSegment = z.object({
  startsAt: z.string(),
  endsAt: z.string(),
  source: z.object({
    type: z.enum(['takeover', 'override', 'alert', 'schedule', 'assignment', 'group-assignment', 'idle']),
    id: z.string().nullable(),
    name: z.string().nullable(),
    campaignId: z.string().nullable().describe('the campaign the schedule shows, else null'),
  }),
  content: z.object({ type: z.string(), id: z.string(), name: z.string().nullable() }).nullable(),
  reason: z.string(),
  outranked: z.array(z.object({ id: z.string(), name: z.string(), priority: z.number() })),
  skipped: z
    .array(
      z.object({
        type: z.enum(['schedule', 'assignment', 'group-assignment']),
        id: z.string(),
        name: z.string().nullable(),
        priority: z.number().nullable(),
        reason: z.enum(['layout_unpublished', 'playlist_empty']),
        content: z.object({ type: z.enum(['playlist', 'layout']), id: z.string(), name: z.string().nullable() }),
      }),
    )
    .describe('stronger sources passed over here because they had nothing to play: a layout never published, a playlist with nothing playable'),
});

/** The schedules' preview: content's resolver explained (preview.service.ts). */
export const previewRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/schedules/preview',
    auth: 'session',
    minRole: 'viewer',
    tags: ['Schedules'],
    summary: 'What plays on a screen (or for a group) between two instants, and why',
    description:
      'At most 62 days and 3000 segments (past that, the timeline stops early with a `preview_truncated` warning). Each segment names its source (schedule, or the screen or group of an assignment; idle), its content, a sentence saying why, the schedules it outranked and the stronger sources passed over because they had nothing to play (`skipped`).',
    body: z
      .object({ screenId: Uuid.optional(), groupId: Uuid.optional(), from: Instant, to: Instant })
      .refine((b) => Boolean(b.screenId) !== Boolean(b.groupId), { message: 'give screenId or groupId', path: ['screenId'] }),
    responses: {
      400: { description: 'validation_failed: screenId or groupId names nothing, or the window is wrong' },
      200: {
        description: 'The timeline',
        data: z.object({
          timeZone: z.string(),
          from: z.string(),
          to: z.string(),
          timeline: z.array(PreviewSegment),
          warnings: z.array(z.object({ code: z.string(), message: z.string() }).passthrough()),
        }),
      },
    },
    handler: async (ctx, { body }) => ok(await previewTimeline(ctx.deps.db, body, windowSource(ctx.deps))),
  }),
];
