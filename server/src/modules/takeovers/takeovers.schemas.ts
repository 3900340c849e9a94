/** The takeover and override bodies and answers (DESIGN.md section 12; docs/takeovers.md). */
import { z } from 'zod';
import { uuidParam as Uuid } from '../../platform/http/route.js';
import { TargetsInput } from '../screens/index.js';

export const SEVERITIES = ['info', 'warning', 'emergency'] as const;
export type Severity = (typeof SEVERITIES)[number];

const Instant = z.iso.datetime({ offset: true });
export const ContentInput = z.object({ type: z.enum(['asset', 'playlist', 'layout', 'widget']), id: Uuid }).describe('what plays (or send message)');
export const MessageInput = z
  .object({ text: z.string().trim().min(1).max(2000), severity: z.enum(SEVERITIES) })
  .describe('a full-screen message instead of content; emergency is red, large and readable at a distance');
const Audio = z.enum(['force-on', 'default']).describe('force-on plays the media with sound whatever the playlist or zone says');

export const TakeoverBody = z.object({
  content: ContentInput.optional(),
  message: MessageInput.optional(),
  targets: TargetsInput,
  endsAt: Instant.nullable().optional().describe('when it ends on its own (in the future); absent or null: until cancelled'),
  reason: z.string().trim().min(1).max(1000).describe('why (kept in the audit trail)'),
  audio: Audio.default('default'),
});
export type TakeoverInput = z.infer<typeof TakeoverBody>;

export const OverrideBody = z.object({
  content: ContentInput.optional(),
  message: MessageInput.optional(),
  targets: TargetsInput,
  startsAt: Instant.optional().describe('default now'),
  endsAt: Instant.describe('required: an override always ends on its own'),
  reason: z.string().trim().max(1000).default(''),
  audio: Audio.default('default'),
});
export type OverrideInput = z.infer<typeof OverrideBody>;

export const EndBody = z.object({ reason: z.string().trim().min(1).max(1000) });
export const StopBody = z.object({ reason: z.string().trim().max(1000).default('') });

const Event = z.object({ action: z.string(), by: z.object({ userId: z.string().nullable(), label: z.string() }), reason: z.string(), at: z.string() });
const Common = {
  id: z.string(),
  content: z.object({ type: z.string(), id: z.string() }).nullable(),
  message: z.object({ text: z.string(), severity: z.enum(SEVERITIES) }).nullable(),
  severity: z.enum(SEVERITIES).describe('ranks windows of one kind (content counts as warning)'),
  audio: z.enum(['force-on', 'default']),
  targets: z.object({
    all: z.boolean().optional(),
    screenIds: z.array(z.string()).optional(),
    groupIds: z.array(z.string()).optional(),
    locationIds: z.array(z.string()).optional(),
  }),
  startedAt: z.string(),
  endsAt: z.string().nullable(),
  reason: z.string(),
  endedAt: z.string().nullable(),
  endReason: z.string().nullable(),
  createdBy: z.object({ userId: z.string().nullable(), label: z.string() }),
  origin: z.object({ kind: z.string(), id: z.string(), ruleId: z.string().nullable() }).nullable(),
  events: z.array(Event).describe('the audit trail: start, cancel or stop, natural end; who and why'),
};
export const TakeoverDtoSchema = z.object({ ...Common, state: z.enum(['active', 'ended', 'cancelled']) });
export const OverrideDtoSchema = z.object({
  ...Common,
  startsAt: z.string(),
  state: z.enum(['scheduled', 'active', 'ended', 'stopped']),
});
export type TakeoverDto = z.infer<typeof TakeoverDtoSchema>;
export type OverrideDto = z.infer<typeof OverrideDtoSchema>;
