import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Presentation networks (issue 21, docs/presentation-networks.md): screens that play in step.
 * A screen is in at most one network (`unique screen_id`); deleting a network or a screen
 * removes its memberships. `epoch` is the shared reference (server clock) every member's
 * playlist cycle counts from.
 */
export const m0410_presentation_networks: Migration = {
  version: 410,
  name: 'presentation_networks',
  async up(db: Kysely<any>) {
    await sql`
      create table presentation_networks (
        id text primary key,
        name text not null,
        epoch text not null,
        revision integer not null default 1,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`create index presentation_networks_name on presentation_networks (name, id)`.execute(db);
    await sql`
      create table presentation_network_members (
        network_id text not null references presentation_networks(id) on delete cascade,
        screen_id text not null unique references screens(id) on delete cascade,
        position integer not null,
        leader integer not null default 0,
        primary key (network_id, screen_id)
      ) strict`.execute(db);
  },
};
