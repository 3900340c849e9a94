import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * One-time set-password links (docs/console.md, "Passwords"): an owner or admin makes one
 * for a user, the user opens it and chooses a password. Only the SHA-256 of the token is
 * kept; a link works once and expires (24 h). Making a new link for a user ends the ones
 * made before (`used_at` set with `superseded` = 1).
 */
export const m0250_password_links: Migration = {
  version: 250,
  name: 'password_links',
  async up(db: Kysely<any>) {
    await sql`
      create table password_links (
        id text primary key,
        user_id text not null references users(id) on delete cascade,
        token_hash text not null unique,
        created_by text references users(id) on delete set null,
        created_at text not null,
        expires_at text not null,
        used_at text,
        superseded integer not null default 0 check (superseded in (0, 1))
      ) strict`.execute(db);
    await sql`create index password_links_user on password_links(user_id)`.execute(db);
  },
};
