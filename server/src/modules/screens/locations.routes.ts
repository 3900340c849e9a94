import { DateTime } from 'luxon';
import { z } from 'zod';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { afterCursor, pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import type { LocationsTable } from '../../platform/db/schema.js';
import { bumpManifestRevision } from './revision.js';
import { newId, nowIso } from './screens.repo.js';
import { locationScreenIds } from './targets.js';
import { forgetTarget, refuseIfUsed } from './usage.js';

const TAGS = ['Locations'];
const IdParams = z.object({ id: uuidParam });

export const isTimeZone = (zone: string) => DateTime.local().setZone(zone).isValid;
const TimeZone = z.string().min(1).max(100).refine(isTimeZone, 'an IANA time zone such as Europe/Paris');

export const LocationDto = z
  .object({
    id: z.string(),
    name: z.string(),
    address: z.string().nullable(),
    timeZone: z.string(),
    latitude: z.number().nullable(),
    longitude: z.number().nullable(),
    notes: z.string().nullable(),
    screenCount: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Location' });

const toDto = (r: LocationsTable, screenCount: number) => ({
  id: r.id,
  name: r.name,
  address: r.address,
  timeZone: r.time_zone,
  latitude: r.latitude,
  longitude: r.longitude,
  notes: r.notes,
  screenCount,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const fields = {
  name: z.string().trim().min(1).max(200),
  address: z.string().trim().max(500).nullable().optional(),
  timeZone: TimeZone,
  latitude: z.number().min(-90).max(90).nullable().optional(),
  longitude: z.number().min(-180).max(180).nullable().optional(),
  notes: z.string().max(5000).nullable().optional(),
};

export const locationRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/locations',
    auth: 'session',
    tags: TAGS,
    summary: 'List locations (time zone and coordinates used by schedules and alerts)',
    query: pageQuery.extend({ q: z.string().max(200).optional() }),
    responses: { 200: { description: 'Locations by name', data: pageOf(LocationDto) } },
    handler: async (ctx, { query }) => {
      let q = ctx.deps.db
        .selectFrom('locations')
        .selectAll()
        .where(afterCursor('name', 'id', 'asc', query.cursor));
      if (query.q) {
        const needle = query.q.toLowerCase();
        q = q.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['name']), eb.val(needle)]), '>', 0));
      }
      const rows = await q
        .orderBy('name')
        .orderBy('id')
        .limit(query.limit + 1)
        .execute();
      const page = toPage(rows, query.limit, (r) => r.name);
      const counts = new Map<string, number>();
      if (page.items.length) {
        const c = await ctx.deps.db
          .selectFrom('screens')
          .select(['location_id', (eb) => eb.fn.countAll<number>().as('n')])
          .where(
            'location_id',
            'in',
            page.items.map((r) => r.id),
          )
          .groupBy('location_id')
          .execute();
        for (const r of c) counts.set(r.location_id!, Number(r.n));
      }
      return ok({ items: page.items.map((r) => toDto(r, counts.get(r.id) ?? 0)), nextCursor: page.nextCursor });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/locations',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Create a location',
    body: z.object(fields).strict(),
    responses: { 201: { description: 'The location', data: LocationDto } },
    handler: async (ctx, { body }) => {
      const now = nowIso();
      const row: LocationsTable = {
        id: newId(),
        name: body.name,
        address: body.address ?? null,
        time_zone: body.timeZone,
        latitude: body.latitude ?? null,
        longitude: body.longitude ?? null,
        notes: body.notes ?? null,
        created_at: now,
        updated_at: now,
      };
      await ctx.deps.db.insertInto('locations').values(row).execute();
      return created(toDto(row, 0));
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/locations/{id}',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Change a location; a new time zone re-times every screen there',
    params: IdParams,
    body: z.object({ ...fields, name: fields.name.optional(), timeZone: TimeZone.optional() }).strict(),
    responses: { 200: { description: 'The location', data: LocationDto } },
    handler: async (ctx, { params, body }) => {
      const db = ctx.deps.db;
      const row = await db.selectFrom('locations').selectAll().where('id', '=', params.id).executeTakeFirst();
      if (!row) throw notFound('Location');
      const set: Partial<LocationsTable> = { updated_at: nowIso() };
      if (body.name !== undefined) set.name = body.name;
      if (body.address !== undefined) set.address = body.address;
      if (body.timeZone !== undefined) set.time_zone = body.timeZone;
      if (body.latitude !== undefined) set.latitude = body.latitude;
      if (body.longitude !== undefined) set.longitude = body.longitude;
      if (body.notes !== undefined) set.notes = body.notes;
      await db.updateTable('locations').set(set).where('id', '=', row.id).execute();
      const screens = await locationScreenIds(db, row.id);
      if (body.timeZone !== undefined && body.timeZone !== row.time_zone) await bumpManifestRevision(ctx.deps, screens);
      const updated = await db.selectFrom('locations').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
      return ok(toDto(updated, screens.length));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/locations/{id}',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Delete a location that no screen is in',
    description:
      'Refused (409 `conflict`) while screens are there (`details.screenIds`) or schedules target it (`details.usedBy` lists them, `{type, id, name}`); move the screens and change the schedules’ targets first.',
    params: IdParams,
    responses: { 204: { description: 'Deleted' }, 409: { description: 'conflict: screens are still there, or schedules target the location' } },
    handler: async (ctx, { params }) => {
      const db = ctx.deps.db;
      const row = await db.selectFrom('locations').select(['id', 'name']).where('id', '=', params.id).executeTakeFirst();
      if (!row) throw notFound('Location');
      await db.transaction().execute(async (trx) => {
        const screens = await locationScreenIds(trx, row.id);
        if (screens.length)
          throw new ApiError('conflict', `${screens.length} screen(s) are at this location; move them first`, {
            details: { screenIds: screens.slice(0, 100) },
          });
        await refuseIfUsed(ctx.deps, trx, 'location', row.id, `Location "${row.name}"`);
        try {
          await trx.deleteFrom('locations').where('id', '=', row.id).execute();
        } catch (err) {
          if (/FOREIGN KEY/i.test(String((err as Error).message)))
            throw new ApiError('conflict', 'The location is still used (alerts or other records point at it)');
          throw err;
        }
        await forgetTarget(ctx.deps, trx, 'location', row.id);
      });
      return noContent();
    },
  }),
];
