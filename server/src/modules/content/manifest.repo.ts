/**
 * What each screen's last manifest build used (playlists, layouts, assets, schedules, tag rules,
 * assignments, data sources and their outputs, widgets), so a change bumps exactly the screens
 * it alters: sets of refs stored once (`manifest_dep_sets`) and each screen's set (`manifest_screen_deps`).
 */
import { createHash } from 'node:crypto';
import type { Db } from '../../platform/db/database.js';
import { executeText } from '../../platform/db/prepared.js';
import { groupCommit } from '../screens/index.js';

/**
 * 'data-source': a source's id (deleted: every screen showing it); 'data-output': `<sourceId>/<viewKey>` (that output changed);
 * 'widget': a widget's id (its current bundle changed: edited, rebuilt with new data, deleted).
 */
export type DepKind = 'playlist' | 'layout' | 'asset' | 'schedule' | 'tag-rule' | 'assignment' | 'data-source' | 'data-output' | 'widget' | 'campaign';
export interface DepRef {
  kind: DepKind;
  id: string;
}

/**
 * What a manifest build used, as stored: its refs without the screen's own assignment (every
 * screen's build depends on that one, so it is implied by the screen's row), named by a hash
 * of the sorted refs. The screens of one shared build get one set, stored once (migration 0490).
 */
export interface DepSet {
  id: string;
  refs: DepRef[];
}

/** The dependency set of `screenId`'s build that used `deps`. */
export function depSetOf(screenId: string, deps: readonly DepRef[]): DepSet {
  const keys = new Set<string>();
  for (const d of deps) if (!(d.kind === 'assignment' && d.id === screenId)) keys.add(`${d.kind}\u0000${d.id}`);
  const sorted = [...keys].sort();
  const id = createHash('sha256').update(sorted.join('\n')).digest('base64url').slice(0, 22);
  return {
    id,
    refs: sorted.map((k) => {
      const at = k.indexOf('\u0000');
      return { kind: k.slice(0, at) as DepKind, id: k.slice(at + 1) };
    }),
  };
}

/** The screens whose last manifest used any of `refs` (an `assignment` ref names a screen's own assignment by its id). */
export async function screensDependingOn(db: Db, refs: readonly DepRef[]): Promise<string[]> {
  if (refs.length === 0) return [];
  const own = refs.filter((r) => r.kind === 'assignment').map((r) => r.id);
  const rows = await db
    .selectFrom('manifest_screen_deps')
    .select('screen_id')
    .where((eb) =>
      eb.or([
        eb(
          'set_id',
          'in',
          eb
            .selectFrom('manifest_dep_sets')
            .select('set_id')
            .where((eb) => eb.or(refs.map((r) => eb.and([eb('kind', '=', r.kind), eb('ref_id', '=', r.id)])))),
        ),
        ...(own.length > 0 ? [eb('screen_id', 'in', own)] : []),
      ]),
    )
    .execute();
  return rows.map((r) => r.screen_id);
}

/** The screens whose last manifest showed a data source, by name. */
export async function screensDependingOnSource(db: Db, sourceId: string): Promise<{ id: string; name: string }[]> {
  return db
    .selectFrom('manifest_dep_sets as d')
    .innerJoin('manifest_screen_deps as m', 'm.set_id', 'd.set_id')
    .innerJoin('screens as s', 's.id', 'm.screen_id')
    .select(['s.id', 's.name'])
    .where('d.kind', '=', 'data-source')
    .where('d.ref_id', '=', sourceId)
    .distinct()
    .orderBy('s.name')
    .execute();
}

/**
 * Records that the screen's manifest depends on `set`. After one content change every screen
 * rebuilds at once: a screen whose set is already recorded writes nothing (read first, outside
 * any transaction); the others' records are gathered while a write runs and written together
 * (`writeDeps`: a few statements for the whole batch, not a few per screen), as one job of the
 * heartbeats' group commit (SQLite: sharing their commits and fsyncs). On PostgreSQL each
 * statement is a round trip made while holding the writer lock, so the burst after a change
 * costs a few round trips per batch instead of six per screen (issue 25's fleet). Answers
 * whether it wrote.
 */
export async function recordManifestDeps(db: Db, screenId: string, set: DepSet): Promise<boolean> {
  if ((await setOf(db, screenId)) === set.id) return false;
  let recorder = recorders.get(db);
  if (!recorder) {
    recorder = new DepRecorder(db);
    recorders.set(db, recorder);
  }
  await recorder.submit(screenId, set);
  return true;
}

/** Most screens one batch records (two parameters each per statement: within every limit). */
const MAX_DEP_BATCH = 500;

type DepRecord = { screenId: string; set: DepSet; resolve: () => void; reject: (e: unknown) => void };

class DepRecorder {
  private queue: DepRecord[] = [];
  private flushing = false;

  constructor(private readonly db: Db) {}

  submit(screenId: string, set: DepSet): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ screenId, set, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    // Records arriving in the same turn of the event loop join the first batch.
    await new Promise((r) => setImmediate(r));
    while (this.queue.length) {
      const batch = this.queue.splice(0, MAX_DEP_BATCH);
      try {
        await groupCommit(this.db, (trx) => writeDeps(trx, batch));
        for (const r of batch) r.resolve();
      } catch (err) {
        for (const r of batch) r.reject(err);
      }
    }
    this.flushing = false;
  }
}

const recorders = new WeakMap<Db, DepRecorder>();

/**
 * Writes a batch of screens' sets in one transaction: the sets not stored yet (their refs),
 * each screen's row (the last record of a screen wins, as written one after the other), and
 * the sets no screen names any more deleted.
 */
async function writeDeps(trx: Db, batch: readonly DepRecord[]): Promise<void> {
  const latest = new Map<string, DepSet>();
  for (const r of batch) latest.set(r.screenId, r.set);
  const screenIds = [...latest.keys()];
  const old = new Map(
    (await trx.selectFrom('manifest_screen_deps').select(['screen_id', 'set_id']).where('screen_id', 'in', screenIds).execute()).map((r) => [
      r.screen_id,
      r.set_id,
    ]),
  );
  const changed = screenIds.filter((id) => old.get(id) !== latest.get(id)!.id);
  if (changed.length === 0) return;
  const sets = new Map<string, DepSet>();
  for (const id of changed) sets.set(latest.get(id)!.id, latest.get(id)!);
  const stored = new Set(
    (
      await trx
        .selectFrom('manifest_dep_sets')
        .select('set_id')
        .distinct()
        .where('set_id', 'in', [...sets.keys()])
        .execute()
    ).map((r) => r.set_id),
  );
  for (const set of sets.values()) {
    if (stored.has(set.id)) continue;
    for (let i = 0; i < set.refs.length; i += 300) {
      await trx
        .insertInto('manifest_dep_sets')
        .values(set.refs.slice(i, i + 300).map((d) => ({ set_id: set.id, kind: d.kind, ref_id: d.id })))
        .execute();
    }
  }
  await trx
    .insertInto('manifest_screen_deps')
    .values(changed.map((id) => ({ screen_id: id, set_id: latest.get(id)!.id })))
    .onConflict((oc) => oc.column('screen_id').doUpdateSet((eb) => ({ set_id: eb.ref('excluded.set_id') })))
    .execute();
  const dropped = [...new Set(changed.map((id) => old.get(id)).filter((id): id is string => id !== undefined && !sets.has(id)))];
  if (dropped.length) await dropSetsIfUnused(trx, dropped);
}

const SET_OF = 'select set_id from manifest_screen_deps where screen_id = ?';

async function setOf(db: Db, screenId: string): Promise<string | undefined> {
  const rows = (await executeText<{ set_id: string }>(db, SET_OF, [screenId])).rows;
  return rows[0]?.set_id;
}

/** Deletes those of the sets that no screen names. */
async function dropSetsIfUnused(db: Db, setIds: readonly string[]): Promise<void> {
  await db
    .deleteFrom('manifest_dep_sets')
    .where('set_id', 'in', setIds)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('manifest_screen_deps as m').select('m.screen_id').whereRef('m.set_id', '=', 'manifest_dep_sets.set_id'))))
    .execute();
}

/** Forgets a screen's manifest dependencies (the screen is being deleted). */
export async function deleteManifestDeps(db: Db, screenId: string): Promise<void> {
  const old = await setOf(db, screenId);
  if (old === undefined) return;
  await db.deleteFrom('manifest_screen_deps').where('screen_id', '=', screenId).execute();
  await dropSetsIfUnused(db, [old]);
}

const NAMED_SQL = `select target_id from schedule_targets where target_type = 'screen'
  union select target_id from playlist_assignments where target_type = 'screen'`;

/** Every screen a schedule (enabled or not) or a playlist assignment names by its own id. */
export async function screensNamedDirectly(db: Db): Promise<string[]> {
  return (await executeText<{ target_id: string }>(db, NAMED_SQL, [])).rows.map((r) => r.target_id);
}
