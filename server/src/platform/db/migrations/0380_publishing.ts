import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * The publishing module (issue 20, docs/publishing.md): submissions of a content item's
 * draft (or of an older publication, for a rollback) for approval, their audit trail, and
 * the notifications people get about them. Users deleted: their ids become null.
 */
export const m0380_publishing: Migration = {
  version: 380,
  name: 'publishing',
  async up(db: Kysely<any>) {
    await sql`
      create table content_submissions (
        id text primary key,
        content_type text not null,
        content_id text not null,
        kind text not null check (kind in ('draft', 'rollback')),
        state text not null check (state in ('pending', 'changes_requested', 'approved', 'scheduled', 'published', 'cancelled', 'stale')),
        message text not null default '',
        snapshot text not null,
        draft_revision integer not null,
        submitted_by text references users(id) on delete set null,
        decided_by text references users(id) on delete set null,
        decided_at text,
        comment text,
        publish_at text,
        publication_id text,
        publication_number integer,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`create index content_submissions_inbox on content_submissions (state, created_at)`.execute(db);
    await sql`create index content_submissions_item on content_submissions (content_type, content_id, state)`.execute(db);
    await sql`create index content_submissions_due on content_submissions (publish_at) where state = 'scheduled'`.execute(db);
    await sql`create index content_submissions_created on content_submissions (created_at, id)`.execute(db);
    await sql`
      create table content_submission_events (
        id text primary key,
        submission_id text not null references content_submissions(id) on delete cascade,
        at text not null,
        by text references users(id) on delete set null,
        action text not null,
        comment text
      ) strict`.execute(db);
    await sql`create index content_submission_events_submission on content_submission_events (submission_id, at)`.execute(db);
    await sql`
      create table notifications (
        id text primary key,
        user_id text references users(id) on delete set null,
        kind text not null,
        title text not null,
        body text not null default '',
        submission_id text references content_submissions(id) on delete set null,
        created_at text not null,
        read_at text
      ) strict`.execute(db);
    await sql`create index notifications_user on notifications (user_id, created_at)`.execute(db);
  },
};
