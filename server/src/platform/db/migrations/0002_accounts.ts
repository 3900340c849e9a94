import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

export const m0002_accounts: Migration = {
  version: 2,
  name: 'accounts',
  async up(db: Kysely<any>) {
    await sql`
      create table users (
        id text primary key,
        email text not null unique,
        display_name text not null,
        role text not null check (role in ('owner', 'admin', 'publisher', 'editor', 'viewer')),
        password_hash text,
        disabled_at text,
        totp_secret_sealed text,
        totp_pending_sealed text,
        totp_enabled integer not null default 0 check (totp_enabled in (0, 1)),
        totp_last_step integer,
        preferences text not null default '{}',
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`
      create table sessions (
        id text primary key,
        user_id text references users(id) on delete cascade,
        data text not null,
        created_at text not null,
        last_seen_at text not null,
        expires_at text not null
      ) strict`.execute(db);
    await sql`create index sessions_user on sessions(user_id)`.execute(db);
    await sql`create index sessions_expiry on sessions(expires_at)`.execute(db);
    await sql`
      create table auth_throttle (
        key text primary key,
        failures integer not null,
        window_started_at text not null,
        locks integer not null default 0,
        locked_until text
      ) strict`.execute(db);
    await sql`
      create table recovery_codes (
        id text primary key,
        user_id text not null references users(id) on delete cascade,
        code_hash text not null,
        used_at text,
        created_at text not null
      ) strict`.execute(db);
    await sql`create index recovery_codes_user on recovery_codes(user_id)`.execute(db);
    await sql`
      create table passkeys (
        id text primary key,
        user_id text not null references users(id) on delete cascade,
        credential_id text not null unique,
        public_key blob not null,
        counter integer not null,
        transports text not null default '[]',
        device_type text,
        backed_up integer not null default 0,
        name text not null,
        created_at text not null,
        last_used_at text
      ) strict`.execute(db);
    await sql`create index passkeys_user on passkeys(user_id)`.execute(db);
    await sql`
      create table integration_tokens (
        id text primary key,
        public_id text not null unique,
        secret_hash text not null,
        name text not null,
        capabilities text not null,
        created_by text references users(id) on delete set null,
        created_at text not null,
        last_used_at text,
        revoked_at text
      ) strict`.execute(db);
  },
};
