import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Campaigns (issue 20, docs/campaigns.md): a bundle of content and placements released
 * together. `campaigns.draft` is what the editor edits; a release is an immutable snapshot
 * of the draft plus the publications its content got; the schedules a release made are
 * marked `campaign_owned` so the next release replaces them.
 */
export const m0390_campaigns: Migration = {
  version: 390,
  name: 'campaigns',
  async up(db: Kysely<any>) {
    await sql`
      create table campaigns (
        id text primary key,
        name text not null,
        description text not null default '',
        draft text not null,
        revision integer not null default 1,
        published_release_id text,
        created_by text references users(id) on delete set null,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`create index campaigns_name on campaigns (name, id)`.execute(db);
    await sql`
      create table campaign_releases (
        id text primary key,
        campaign_id text not null references campaigns(id) on delete cascade,
        number integer not null,
        snapshot text not null,
        note text not null default '',
        source text not null,
        published_by text references users(id) on delete set null,
        published_at text not null,
        unique (campaign_id, number)
      ) strict`.execute(db);
    await sql`alter table schedules add column campaign_owned integer not null default 0`.execute(db);
    await sql`create index schedules_campaign on schedules (campaign_id) where campaign_id is not null`.execute(db);
  },
};
