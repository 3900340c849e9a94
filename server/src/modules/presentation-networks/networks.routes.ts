import type { Context } from 'koa';
import { z } from 'zod';
import type { DevicePrincipal } from '../../platform/http/auth.js';
import { pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { checkRevision, etagOf } from '../../platform/http/revision.js';
import { created, defineRoute, noContent, ok, uuidParam as Uuid } from '../../platform/http/route.js';
import { listNetworkRows } from './networks.repo.js';
import {
  createNetwork,
  deleteNetwork,
  joinNetwork,
  leaveNetwork,
  MAX_MEMBERS,
  networkDto,
  networkRow,
  playerNetwork,
  renameNetwork,
  screenMembership,
  setMembers,
  testNetwork,
} from './networks.service.js';

const TAGS = ['Presentation networks'];
const IdParams = z.object({ id: Uuid });
const Name = z.string().trim().min(1).max(200);

const Peer = z.object({
  screenId: z.string(),
  name: z.string(),
  position: z.number().int().describe('0, 1, 2... in the order of the member list'),
  leader: z.boolean(),
  online: z.boolean().describe('a socket open now, or seen within its online window'),
});
const NetworkDto = z
  .object({
    id: z.string(),
    name: z.string(),
    epoch: z.string().describe('server-clock ISO time every member counts its playlist cycle from'),
    revision: z.number().int().describe('bumped by every change (name, members); send it back in If-Match'),
    leaderScreenId: z.string().nullable(),
    screens: z.array(Peer),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'PresentationNetwork' });
const Membership = z
  .object({ networkId: z.string(), networkName: z.string(), position: z.number().int(), leader: z.boolean(), memberCount: z.number().int() })
  .nullable()
  .meta({ id: 'PresentationNetworkMembership' });
const PlayerNetwork = z
  .object({
    id: z.string(),
    name: z.string(),
    epoch: z.string(),
    revision: z.number().int(),
    screenId: z.string(),
    position: z.number().int(),
    leader: z.boolean(),
    leaderScreenId: z.string().nullable(),
    peers: z.array(Peer),
    serverTime: z.string(),
    clockOffsetMs: z
      .number()
      .nullable()
      .describe('serverTime minus the clientTime sent (ms; one-way, so it includes the request’s travel): add to the local clock; null without clientTime'),
  })
  .nullable()
  .meta({ id: 'PlayerPresentationNetwork' });

const etag = { headers: { ETag: { description: 'The network’s revision; send it back in If-Match' } } };
const badRefs = { description: 'validation_failed: a field is wrong, or names a screen or network that does not exist (details.issues)' };
const inOther = { description: 'conflict: a screen is already in another network (the message and details.screens name it)' };

async function reply(ctx: Context, id: string, status: 200 | 201 = 200) {
  const d = await networkDto(ctx.deps, await networkRow(ctx.deps.db, id));
  return (status === 201 ? created : ok)(d, etagOf(d.revision));
}

export const networkRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/presentation-networks',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'List presentation networks by name',
    query: pageQuery,
    responses: { 200: { description: 'Networks', data: pageOf(NetworkDto) } },
    handler: async (ctx, { query }) => {
      const page = toPage(await listNetworkRows(ctx.deps.db, query.cursor, query.limit), query.limit, (r) => r.name);
      const items = [];
      for (const r of page.items) items.push(await networkDto(ctx.deps, r));
      return ok({ items, nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/presentation-networks',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Create a presentation network (optionally with its members: screenIds in order, the leader one of them)',
    body: z.object({
      name: Name,
      screenIds: z.array(Uuid).max(MAX_MEMBERS).default([]),
      leaderScreenId: Uuid.nullable().default(null),
    }),
    responses: { 201: { description: 'The network', data: NetworkDto, ...etag }, 400: badRefs, 409: inOther },
    handler: async (ctx, { body }) => {
      const id = await createNetwork(ctx.deps.db, body.name);
      if (body.screenIds.length || body.leaderScreenId) {
        try {
          await setMembers(ctx.deps, await networkRow(ctx.deps.db, id), body.screenIds, body.leaderScreenId);
        } catch (err) {
          await deleteNetwork(ctx.deps, await networkRow(ctx.deps.db, id));
          throw err;
        }
      }
      return reply(ctx, id, 201);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/presentation-networks/{id}',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'A presentation network: its members in order, the leader, who is online',
    params: IdParams,
    responses: { 200: { description: 'The network', data: NetworkDto, ...etag } },
    handler: async (ctx, { params }) => reply(ctx, params.id),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/presentation-networks/{id}',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Rename a presentation network',
    params: IdParams,
    body: z.object({ name: Name }),
    ifMatch: true,
    responses: {
      200: { description: 'The network', data: NetworkDto, ...etag },
      409: { description: 'version_conflict: another change won meanwhile (no If-Match sent)' },
    },
    handler: async (ctx, { params, body }) => {
      const row = await networkRow(ctx.deps.db, params.id);
      checkRevision(ctx, row.revision);
      await renameNetwork(ctx.deps, row, body.name, Boolean(ctx.get('if-match')));
      return reply(ctx, row.id);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/presentation-networks/{id}',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Delete a presentation network (its screens play their own content again)',
    params: IdParams,
    ifMatch: true,
    responses: { 204: { description: 'Deleted' } },
    handler: async (ctx, { params }) => {
      const row = await networkRow(ctx.deps.db, params.id);
      checkRevision(ctx, row.revision);
      await deleteNetwork(ctx.deps, row);
      return noContent();
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/presentation-networks/{id}/screens',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Replace the member list: screenIds in order (their positions), the leader (default the first)',
    description:
      'A screen in another network is refused (409 naming it): take it out there first. Every screen added, kept or removed gets `manifest.changed` (members play the leader’s timeline).',
    params: IdParams,
    body: z.object({ screenIds: z.array(Uuid).max(MAX_MEMBERS), leaderScreenId: Uuid.nullable().default(null) }),
    ifMatch: true,
    responses: { 200: { description: 'The network', data: NetworkDto, ...etag }, 400: badRefs, 409: inOther },
    handler: async (ctx, { params, body }) => {
      const row = await networkRow(ctx.deps.db, params.id);
      checkRevision(ctx, row.revision);
      await setMembers(ctx.deps, row, body.screenIds, body.leaderScreenId);
      return reply(ctx, row.id);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/presentation-networks/{id}/test',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Show the identification pattern (screen name, position, network, a running clock) on every member for `seconds`',
    description: 'Pushes `network.test {networkId, networkName, screenId, screenName, position, leader, memberCount, until}` on each member’s socket.',
    params: IdParams,
    body: z.object({ seconds: z.number().int().min(1).max(600).default(30) }),
    responses: {
      200: {
        description: 'Sent',
        data: z.object({ until: z.string(), screenIds: z.array(z.string()), socketsReached: z.number().int().describe('open sockets the message went to') }),
      },
    },
    handler: async (ctx, { params, body }) => ok(await testNetwork(ctx.deps, await networkRow(ctx.deps.db, params.id), body.seconds)),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/screens/{id}/presentation-network',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'The network a screen plays in (null when none), its position and whether it leads',
    params: IdParams,
    responses: { 200: { description: 'The membership, or null', data: Membership } },
    handler: async (ctx, { params }) => ok(await screenMembership(ctx.deps.db, params.id)),
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/v1/screens/{id}/presentation-network',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Put a screen in a network (at `position`, default last; as leader when `leader`), or move it within its network',
    params: IdParams,
    body: z.object({
      networkId: Uuid,
      position: z.number().int().min(0).max(MAX_MEMBERS).nullable().default(null),
      leader: z.boolean().nullable().default(null),
    }),
    responses: {
      200: { description: 'The membership', data: Membership },
      400: badRefs,
      409: { description: 'conflict: the screen is in another network (named), or the network is full' },
    },
    handler: async (ctx, { params, body }) => {
      await joinNetwork(ctx.deps, params.id, body.networkId, body.position, body.leader);
      return ok(await screenMembership(ctx.deps.db, params.id));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/screens/{id}/presentation-network',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Take a screen out of its network (nothing to do when it is in none); a leader hands over to the first member left',
    params: IdParams,
    responses: { 204: { description: 'Out' } },
    handler: async (ctx, { params }) => {
      await leaveNetwork(ctx.deps, params.id);
      return noContent();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/player/presentation-network',
    auth: 'device',
    tags: ['Player'],
    summary: 'The network this screen plays in (null when none): peers, leader, epoch and the clock offset to follow',
    description:
      'Send `clientTime` (ms since 1970 on the player’s clock) to get `clockOffsetMs`; players refine it NTP-style from socket `ping`/`pong` (the sample with the smallest round trip wins).',
    query: z.object({ clientTime: z.coerce.number().min(0).max(1e14).optional() }),
    responses: { 200: { description: 'The network, or null', data: PlayerNetwork } },
    handler: async (ctx, { query, auth }) => {
      const now = Date.now();
      const net = await playerNetwork(ctx.deps, (auth as DevicePrincipal).screenId);
      if (!net) return ok(null);
      return ok({ ...net, serverTime: new Date(now).toISOString(), clockOffsetMs: query.clientTime === undefined ? null : now - query.clientTime });
    },
  }),
];
