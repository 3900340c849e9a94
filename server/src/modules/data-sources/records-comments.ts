import type { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import { nowIso } from '../../platform/db/ids.js';
import { invalidReference, unknownIdsIn } from '../../platform/http/errors.js';
import { created, defineRoute } from '../../platform/http/route.js';
import { atLeast, effectiveLevel } from './access.js';
import { envOf, type Env } from './data-sources.service.js';
import { appendEvent } from './records.repo.js';
import { mentionCandidates } from './records-attachments.repo.js';
import { recordFor } from './records-attachments.service.js';
import { CommentBody, CommentDto, RECORD_TAGS, RecordParams } from './records-attachments.schemas.js';

/**
 * Comments on records (issue 18, docs/data-sources.md "Comments and attachments"): anyone who
 * may read the source may comment (reviewers are often viewers). A comment is an entry of
 * the record's audit trail (kind `comment`, data {body, mentions}); it does not change the
 * record, so its revision stays.
 */

/** Of the mentioned ids, those naming an active user with (at least viewer) access to the source. */
async function usersWithAccess(db: Db, sourceId: string, ids: readonly string[]): Promise<Set<string>> {
  const { users, grants } = await mentionCandidates(db, sourceId, [...new Set(ids)]);
  const grantOf = new Map(grants.map((g) => [g.user_id, g.level]));
  return new Set(users.filter((u) => !u.disabled_at && atLeast(effectiveLevel(u.role, grantOf.get(u.id) ?? null), 'viewer')).map((u) => u.id));
}

export async function addComment(env: Env, sourceId: string, recordId: string, body: z.output<typeof CommentBody>): Promise<z.infer<typeof CommentDto>> {
  const db = env.deps.db;
  const mentions = body.mentions ?? [];
  return db.transaction().execute(async (trx) => {
    const record = await recordFor(env, trx, sourceId, recordId, 'viewer');
    const allowed = await usersWithAccess(trx, sourceId, mentions);
    const refs = unknownIdsIn('mentions', mentions, allowed, 'names no active user with access to this source');
    if (refs.length) throw invalidReference('Mentions must name active users who have access to this source', refs);
    const unique = [...new Set(mentions)];
    const at = nowIso();
    const id = await appendEvent(trx, sourceId, record.id, 'comment', { userId: env.caller.userId, tokenId: null }, { body: body.body, mentions: unique }, at);
    return { id, recordId: record.id, body: body.body, mentions: unique, by: env.caller.userId, at };
  });
}

export const recordCommentRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/data-sources/{id}/records/{recordId}/comments',
    auth: 'session',
    minRole: 'viewer',
    tags: RECORD_TAGS,
    summary: 'Comment on a record, mentioning people',
    description:
      'Anyone with viewer access to the source may comment (reviewers are often viewers). `mentions` are user ids; each must be an active user with access to the source (400 naming `mentions.N`). The comment joins the record’s audit trail (kind `comment`); the record and its revision do not change.',
    params: RecordParams,
    body: CommentBody,
    responses: {
      201: { description: 'The comment', data: CommentDto },
      400: { description: 'validation_failed: the body is empty or too long, or a mention names no active user with access (details.issues: mentions.N)' },
      403: { description: 'forbidden: the caller may not read this source' },
      404: { description: 'not_found: no such source, or no such record in it' },
    },
    handler: async (ctx, { params, body, auth }) => created(await addComment(envOf(ctx, auth), params.id, params.recordId, body)),
  }),
];
