/**
 * Presentation networks (issue 21, docs/presentation-networks.md): screens that play in
 * step. Members play the leader's timeline; item boundaries count from the network's epoch
 * on the server clock. A screen is in at most one network: adding it to a second one is a
 * 409 naming the first (take it out there first). Every membership or name change bumps the
 * manifests of the screens it touches (`manifest.changed`).
 */
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import { ApiError, conflict, invalidField, invalidReference, notFound, unknownIdsIn } from '../../platform/http/errors.js';
import { contentChanged, type ManifestNetwork } from '../content/index.js';
import { deriveStatus } from '../screens/index.js';
import {
  bumpNetworkRevision,
  deleteMembership,
  deleteNetworkRow,
  existingScreens,
  getNetworkRow,
  insertNetwork,
  type MemberRow,
  memberRows,
  membershipOf,
  membershipsOf,
  type NetworkRow,
  replaceMembers,
  updateNetwork,
} from './networks.repo.js';

/** The most screens one network holds. */
export const MAX_MEMBERS = 64;

export async function networkRow(db: Db, id: string): Promise<NetworkRow> {
  const row = await getNetworkRow(db, id);
  if (!row) throw notFound('Presentation network');
  return row;
}

/** Online: a socket open now, or the screens module's own status (seen within its online window). */
function onlineTest(deps: AppDeps): (m: Pick<MemberRow, 'screen_id' | 'last_seen_ms' | 'expected_interval_sec'>) => boolean {
  const connected = new Set(deps.realtime?.connectedScreens() ?? []);
  const now = Date.now();
  return (m) => connected.has(m.screen_id) || deriveStatus(m, now) === 'online';
}

export async function networkDto(deps: AppDeps, row: NetworkRow) {
  const members = await memberRows(deps.db, row.id);
  const online = onlineTest(deps);
  const leader = members.find((m) => m.leader === 1);
  return {
    id: row.id,
    name: row.name,
    epoch: row.epoch,
    revision: row.revision,
    leaderScreenId: leader?.screen_id ?? null,
    screens: members.map((m) => ({ screenId: m.screen_id, name: m.name, position: m.position, leader: m.leader === 1, online: online(m) })),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function createNetwork(db: Db, name: string): Promise<string> {
  const t = nowIso();
  const id = newId();
  // The epoch is a whole second: the cycle's origin, the same on every member.
  await insertNetwork(db, { id, name, epoch: nowIso(Math.floor(Date.parse(t) / 1000) * 1000), revision: 1, created_at: t, updated_at: t });
  return id;
}

export async function renameNetwork(deps: AppDeps, row: NetworkRow, name: string, ifMatchSent: boolean): Promise<void> {
  if (!(await updateNetwork(deps.db, row.id, row.revision, { name, updated_at: nowIso() })))
    throw new ApiError('version_conflict', 'This network was changed meanwhile. Reload and apply your change again.', { status: ifMatchSent ? 412 : 409 });
  await contentChanged(deps, [], await memberIds(deps.db, row.id));
}

export async function deleteNetwork(deps: AppDeps, row: NetworkRow): Promise<void> {
  const ids = await memberIds(deps.db, row.id);
  await deleteNetworkRow(deps.db, row.id);
  await contentChanged(deps, [], ids);
}

async function memberIds(db: Db, networkId: string): Promise<string[]> {
  return (await memberRows(db, networkId)).map((m) => m.screen_id);
}

/** 409 naming the other network when any of the screens is in one that is not `networkId`. */
async function refuseOtherNetworks(db: Db, networkId: string, screenIds: readonly string[]): Promise<void> {
  const other = (await membershipsOf(db, screenIds)).filter((m) => m.network_id !== networkId);
  if (other.length === 0) return;
  const first = other[0]!;
  throw conflict(
    `Screen ${first.screen_id} is already in the presentation network "${first.name}"${other.length > 1 ? ` (and ${other.length - 1} more screens are in other networks)` : ''}; take it out there first`,
    { screens: other.map((m) => ({ screenId: m.screen_id, networkId: m.network_id, networkName: m.name })) },
  );
}

/** Replaces the member list: `screenIds` in order (positions 0, 1, ...), the leader one of them (default the first). */
export async function setMembers(deps: AppDeps, row: NetworkRow, screenIds: string[], leaderScreenId: string | null): Promise<void> {
  if (new Set(screenIds).size !== screenIds.length) throw invalidField('screenIds', 'A screen is listed twice');
  if (leaderScreenId && !screenIds.includes(leaderScreenId)) throw invalidField('leaderScreenId', 'The leader must be one of screenIds');
  const before = await memberIds(deps.db, row.id);
  await deps.db.transaction().execute(async (trx) => {
    const known = await existingScreens(trx, screenIds);
    const missing = unknownIdsIn('screenIds', screenIds, known, 'No such screen');
    if (missing.length) throw invalidReference('Some screens do not exist', missing);
    await refuseOtherNetworks(trx, row.id, screenIds);
    const leader = leaderScreenId ?? screenIds[0] ?? null;
    await replaceMembers(
      trx,
      row.id,
      screenIds.map((screen_id, position) => ({ screen_id, position, leader: screen_id === leader ? 1 : 0 })),
    );
    await bumpNetworkRevision(trx, row.id, nowIso());
  });
  await contentChanged(deps, [], [...new Set([...before, ...screenIds])]);
}

export async function screenMembership(db: Db, screenId: string) {
  if ((await existingScreens(db, [screenId])).size === 0) throw notFound('Screen');
  const m = await membershipOf(db, screenId);
  if (!m) return null;
  const net = await networkRow(db, m.network_id);
  const count = (await memberRows(db, m.network_id)).length;
  return { networkId: net.id, networkName: net.name, position: m.position, leader: m.leader === 1, memberCount: count };
}

/**
 * Puts one screen in a network at `position` (default: last; the others keep their order
 * around it), as the leader when `leader` (else the leader stays, or it is the first).
 */
export async function joinNetwork(deps: AppDeps, screenId: string, networkId: string, position: number | null, leader: boolean | null): Promise<void> {
  if ((await existingScreens(deps.db, [screenId])).size === 0) throw notFound('Screen');
  const row = await getNetworkRow(deps.db, networkId);
  if (!row) throw invalidReference('No such presentation network', { path: ['networkId'], message: 'No such presentation network' });
  const members = await memberRows(deps.db, networkId);
  const others = members.filter((m) => m.screen_id !== screenId).map((m) => m.screen_id);
  const self = members.find((m) => m.screen_id === screenId);
  if (!self && others.length >= MAX_MEMBERS) throw conflict(`A presentation network holds at most ${MAX_MEMBERS} screens`);
  const at = Math.min(position ?? (self ? self.position : others.length), others.length);
  const ids = [...others.slice(0, at), screenId, ...others.slice(at)];
  const currentLeader = members.find((m) => m.leader === 1)?.screen_id ?? null;
  const leaderId = leader === true ? screenId : leader === false && currentLeader === screenId ? (others[0] ?? null) : (currentLeader ?? ids[0]!);
  await setMembers(deps, row, ids, leaderId ?? screenId);
}

export async function leaveNetwork(deps: AppDeps, screenId: string): Promise<void> {
  if ((await existingScreens(deps.db, [screenId])).size === 0) throw notFound('Screen');
  const m = await membershipOf(deps.db, screenId);
  if (!m) return;
  const row = await networkRow(deps.db, m.network_id);
  const members = await memberRows(deps.db, m.network_id);
  const rest = members.filter((x) => x.screen_id !== screenId);
  const leader = rest.find((x) => x.leader === 1)?.screen_id ?? rest[0]?.screen_id ?? null;
  await setMembers(
    deps,
    row,
    rest.map((x) => x.screen_id),
    leader,
  );
  await deleteMembership(deps.db, screenId);
}

/** The player's view of its network: peers, leader, epoch (null when the screen is in none). */
export async function playerNetwork(deps: AppDeps, screenId: string) {
  const m = await membershipOf(deps.db, screenId);
  if (!m) return null;
  const row = await networkRow(deps.db, m.network_id);
  const dto = await networkDto(deps, row);
  return {
    id: dto.id,
    name: dto.name,
    epoch: dto.epoch,
    revision: dto.revision,
    screenId,
    position: m.position,
    leader: m.leader === 1,
    leaderScreenId: dto.leaderScreenId,
    peers: dto.screens,
  };
}

/** content's manifest seam: the network a screen plays in, keyed by what changes its manifest. */
export async function manifestNetwork(db: Db, screenId: string): Promise<ManifestNetwork | null> {
  const m = await membershipOf(db, screenId);
  if (!m) return null;
  const row = await getNetworkRow(db, m.network_id);
  if (!row) return null;
  const members = await memberRows(db, row.id);
  const leader = members.find((x) => x.leader === 1) ?? null;
  return {
    id: row.id,
    name: row.name,
    epoch: row.epoch,
    leaderScreenId: leader?.screen_id ?? null,
    position: m.position,
    memberCount: members.length,
    key: `${row.id}:${row.revision}:${leader?.screen_id ?? ''}:${leader?.manifest_revision ?? ''}:${m.position}:${members.length}`,
  };
}

/** Shows the identification pattern on every member until `until`: answers the screens told and the sockets reached. */
export async function testNetwork(deps: AppDeps, row: NetworkRow, seconds: number) {
  const members = await memberRows(deps.db, row.id);
  const until = nowIso(Date.now() + seconds * 1000);
  let sockets = 0;
  for (const m of members) {
    sockets +=
      deps.realtime?.send(m.screen_id, {
        type: 'network.test',
        networkId: row.id,
        networkName: row.name,
        screenId: m.screen_id,
        screenName: m.name,
        position: m.position,
        leader: m.leader === 1,
        memberCount: members.length,
        until,
      }) ?? 0;
  }
  return { until, screenIds: members.map((m) => m.screen_id), socketsReached: sockets };
}
