import { DateTime } from 'luxon';
import { z } from 'zod';
import type { LocationsTable } from '../../platform/db/schema.js';
import { pageOf, pageQuery, toPage } from '../../platform/http/pagination.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { insertLocation, listLocations, screenCountsAt } from './locations.repo.js';
import { changeLocation, deleteLocation } from './locations.service.js';
import { newId, nowIso } from './screens.repo.js';

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
      const page = toPage(await listLocations(ctx.deps.db, query), query.limit, (r) => r.name);
      const counts = await screenCountsAt(
        ctx.deps.db,
        page.items.map((r) => r.id),
      );
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
      await insertLocation(ctx.deps.db, row);
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
      const { row, screenCount } = await changeLocation(ctx.deps, params.id, body);
      return ok(toDto(row, screenCount));
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
      await deleteLocation(ctx.deps, params.id);
      return noContent();
    },
  }),
];
