import { sql, type Kysely } from 'kysely';
import { newId } from '../ids.js';
import type { Migration } from './migration.js';

/**
 * Schedules and widgets move onto the publication model (issue 20, docs/publishing.md): the
 * row is what screens play (the published state), `draft` holds unpublished changes (JSON,
 * null when there are none), `published_at` is null for what was never published (nothing
 * plays it). Every existing schedule and widget is published as it is now: publication 1,
 * source 'migration', so nothing a screen plays changes.
 */
export const m0370_schedule_widget_drafts: Migration = {
  version: 370,
  name: 'schedule_widget_drafts',
  async up(db: Kysely<any>) {
    for (const table of ['schedules', 'widgets']) {
      await sql`alter table ${sql.table(table)} add column draft text`.execute(db);
      await sql`alter table ${sql.table(table)} add column published_at text`.execute(db);
      await sql`update ${sql.table(table)} set published_at = updated_at`.execute(db);
    }
    const schedules = await db.selectFrom('schedules').selectAll().orderBy('id').execute();
    for (const s of schedules) {
      const targets = await db.selectFrom('schedule_targets').selectAll().where('schedule_id', '=', s.id).orderBy('target_id').execute();
      const ids = (kind: string) => targets.filter((t) => t.target_type === kind).map((t) => t.target_id as string);
      const snapshot = {
        name: s.name,
        content: { type: s.content_type, id: s.playlist_id ?? s.layout_id ?? s.campaign_id },
        targets: { screenIds: ids('screen'), groupIds: ids('group'), locationIds: ids('location') },
        startsAt: s.starts_at,
        endsAt: s.ends_at,
        rrule: s.rrule,
        timeZone: s.time_zone,
        followScreenZone: s.follow_screen_zone === 1,
        priority: s.priority,
        enabled: s.enabled === 1,
      };
      await insert(db, 'schedule', s.id, snapshot, s.updated_at);
    }
    const widgets = await db.selectFrom('widgets').selectAll().orderBy('id').execute();
    for (const w of widgets) {
      const snapshot = {
        name: w.name,
        type: w.type,
        settings: JSON.parse(w.settings ?? '{}'),
        template: w.template,
        binding: w.binding ? JSON.parse(w.binding) : null,
      };
      await insert(db, 'widget', w.id, snapshot, w.updated_at);
    }
  },
};

async function insert(db: Kysely<any>, type: string, id: string, snapshot: unknown, at: string) {
  await db
    .insertInto('content_publications')
    .values({
      id: newId(),
      content_type: type,
      content_id: id,
      number: 1,
      snapshot: JSON.stringify(snapshot),
      note: '',
      source: 'migration',
      published_by: null,
      published_at: at,
    })
    .execute();
}
