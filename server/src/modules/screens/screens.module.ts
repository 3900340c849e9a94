import type { AppDeps } from '../../app.js';
import type { RealtimeHub } from '../../platform/realtime/hub.js';
import { expireCommands } from './commands.js';
import { resolveDeviceCredential } from './device-auth.js';
import { runPowerAssist } from './fleet.routes.js';
import { deriveStatus, newId, nowIso } from './screens.repo.js';

/** How long player history is kept: contacts (heartbeats, liveness) and everything else. */
export const CONTACT_RETENTION_MS = 31 * 24 * 3600_000;
export const EVENT_RETENTION_MS = 365 * 24 * 3600_000;

/** Records status transitions (online -> stale -> offline) that happen without a request. */
export async function sweepStatuses(db: AppDeps['db'], now = Date.now()): Promise<number> {
  const rows = await db.selectFrom('screens').select(['id', 'known_status', 'last_seen_ms', 'expected_interval_sec']).execute();
  let changed = 0;
  for (const r of rows) {
    const status = deriveStatus(r, now);
    if (status === r.known_status) continue;
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('screens').set({ known_status: status }).where('id', '=', r.id).where('known_status', '=', r.known_status).execute();
      await trx
        .insertInto('screen_history')
        .values({ id: newId(), screen_id: r.id, at: nowIso(now), at_ms: now, kind: 'status', detail: JSON.stringify({ from: r.known_status, to: status }) })
        .execute();
    });
    changed++;
  }
  return changed;
}

/** Prunes player history past its retention. */
export async function pruneHistory(db: AppDeps['db'], now = Date.now()): Promise<number> {
  const a = await db.deleteFrom('screen_history').where('kind', 'in', ['heartbeat', 'liveness']).where('at_ms', '<', now - CONTACT_RETENTION_MS).executeTakeFirst();
  const b = await db.deleteFrom('screen_history').where('kind', 'not in', ['heartbeat', 'liveness']).where('at_ms', '<', now - EVENT_RETENTION_MS).executeTakeFirst();
  const c = await db.deleteFrom('pairing_sessions').where('expires_at', '<', nowIso(now - 24 * 3600_000)).where('status', 'in', ['pending', 'rejected']).executeTakeFirst();
  return Number(a.numDeletedRows) + Number(b.numDeletedRows) + Number(c.numDeletedRows);
}

/** Wires the screens module into the app: the socket's credential check and periodic jobs. */
export function installScreens(deps: AppDeps, realtime: RealtimeHub): void {
  realtime.setAuthenticator(async (token) => {
    const { screen, credentialId } = await resolveDeviceCredential(deps.db, token);
    return { screenId: screen.id, credentialId, manifestRevision: screen.manifest_revision };
  });
  deps.periodic.every('screens.status-sweep', 30_000, async () => {
    await sweepStatuses(deps.db);
    await expireCommands(deps.db);
  });
  deps.periodic.every('screens.power-assist', 60_000, async () => {
    await runPowerAssist({ db: deps.db, realtime });
  });
  deps.periodic.every('screens.history-prune', 60 * 60_000, async () => {
    await pruneHistory(deps.db);
  });
}
