import { sql, type Kysely } from 'kysely';
import type { Migration } from './migration.js';

/**
 * Plugins (issue 22, docs/plugins.md): the built-in plugins an admin installed
 * (`plugin_installations`), their instances (an overlay config each) and the targets an
 * instance is placed on (`plugin_instance_targets`: 'all', 'screen', 'group' or 'location').
 * Uninstalling keeps the instances (and the noise history) unless purged; an instance of a
 * plugin that is not installed is not delivered.
 */
export const m0430_plugins: Migration = {
  version: 430,
  name: 'plugins',
  async up(db: Kysely<any>) {
    await sql`
      create table plugin_installations (
        plugin_id text primary key,
        version text not null,
        installed_at text not null,
        installed_by text references users(id) on delete set null,
        as_dependency integer not null default 0
      ) strict`.execute(db);
    await sql`
      create table plugin_instances (
        id text primary key,
        plugin_id text not null,
        name text not null,
        config text not null default '{}',
        revision integer not null default 1,
        created_by text references users(id) on delete set null,
        created_at text not null,
        updated_at text not null
      ) strict`.execute(db);
    await sql`create index plugin_instances_plugin on plugin_instances (plugin_id, name, id)`.execute(db);
    await sql`
      create table plugin_instance_targets (
        instance_id text not null references plugin_instances(id) on delete cascade,
        target_type text not null check (target_type in ('all', 'screen', 'group', 'location')),
        target_id text not null,
        primary key (instance_id, target_type, target_id)
      ) strict`.execute(db);
    await sql`create index plugin_instance_targets_target on plugin_instance_targets (target_type, target_id)`.execute(db);
  },
};
