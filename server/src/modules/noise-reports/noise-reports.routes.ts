import { stringify } from 'csv-stringify';
import { z } from 'zod';
import { defineRoute, ok, uuidParam } from '../../platform/http/route.js';
import { TimeZoneName } from '../system/index.js';
import { daily, isoInZone, RESOLUTIONS, reportRange, SCREEN_SORTS, screens, series, summary } from './noise-reports.service.js';

const TAGS = ['Plugin: noise-meter'];
const BASE = '/api/v1/plugins/noise-meter/instances/{id}/history';
const IdParams = z.object({ id: uuidParam });
const Range = {
  from: z.iso.datetime({ offset: true }).meta({ description: 'Start of the range (inclusive), ISO 8601 with an offset' }),
  to: z.iso.datetime({ offset: true }).meta({ description: 'End of the range (exclusive), after `from`, at most 400 days later' }),
  timeZone: TimeZoneName.optional().meta({
    description: "IANA zone of the local days and hours; default: the zone of the instance's first screen (by id), else UTC",
  }),
};
const Resolution = z.enum([...RESOLUTIONS, 'auto']).default('auto');
const bad = { description: 'validation_failed: a bad range (to not after from, over 400 days) or an unknown time zone' };
const missing = { description: 'not_found: no noise-meter instance with this id' };

const Level = z.number().nullable();
const Figures = {
  monitoredMs: z.number(),
  averageLevel: Level,
  peakLevel: Level,
  warningMs: z.number(),
  loudMs: z.number(),
  triggerCount: z.number(),
  coverage: z.number(),
};
const Point = z.object({
  startsAt: z.string(),
  averageLevel: Level,
  peakLevel: Level,
  monitoredMs: z.number(),
  warningMs: z.number(),
  loudMs: z.number(),
  triggerCount: z.number(),
});
const SummaryDto = z.object({
  from: z.string(),
  to: z.string(),
  timeZone: z.string(),
  screenCount: z.number().int(),
  ...Figures,
  loudestPeriods: z.array(z.object({ startsAt: z.string(), endsAt: z.string(), averageLevel: z.number(), peakLevel: Level })),
});
const SeriesDto = z.object({ resolution: z.enum(RESOLUTIONS), timeZone: z.string(), points: z.array(Point) });
const DayDto = z.object({
  date: z.string(),
  startsAt: z.string(),
  endsAt: z.string(),
  hours: z.number().int(),
  ...Figures,
  busiestHour: z.string().nullable(),
});
const ScreenDto = z.object({ screenId: z.string(), name: z.string(), ...Figures });

/** A file-name part: letters, digits, dot, dash and underscore only. */
const sanitise = (s: string) =>
  s
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._-]+/, '')
    .slice(0, 80) || 'noise';

export const noiseReportRoutes = [
  defineRoute({
    method: 'GET',
    path: `${BASE}/summary`,
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: "Noise history summary over a range, for the instance's screens: levels, time in warning and loud, coverage, the loudest hours",
    params: IdParams,
    query: z.object(Range),
    responses: { 200: { description: 'The summary', data: SummaryDto }, 400: bad, 404: missing },
    handler: async (ctx, { params, query }) => ok(await summary(ctx.deps.db, await reportRange(ctx.deps.db, params.id, query))),
  }),
  defineRoute({
    method: 'GET',
    path: `${BASE}/series`,
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'Noise levels over time: one point per slot of the range (a slot without data has null levels: a gap)',
    description:
      "`auto` picks the finest resolution giving at most 1000 points; an explicit one giving more than 10 000 is 400 `too_many_points`. '1d' points are local days of `timeZone`.",
    params: IdParams,
    query: z.object({ ...Range, resolution: Resolution }),
    responses: {
      200: { description: 'The series', data: SeriesDto },
      400: { description: `${bad.description}; too_many_points`, codes: ['validation_failed', 'too_many_points'] },
      404: missing,
    },
    handler: async (ctx, { params, query }) => ok(await series(ctx.deps.db, await reportRange(ctx.deps.db, params.id, query), query.resolution)),
  }),
  defineRoute({
    method: 'GET',
    path: `${BASE}/daily`,
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'One row per local day of the range (23 or 25 hours on DST days), with the busiest hour',
    params: IdParams,
    query: z.object(Range),
    responses: { 200: { description: 'The days', data: z.array(DayDto) }, 400: bad, 404: missing },
    handler: async (ctx, { params, query }) => ok(await daily(ctx.deps.db, await reportRange(ctx.deps.db, params.id, query))),
  }),
  defineRoute({
    method: 'GET',
    path: `${BASE}/screens`,
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'The summary figures per screen of the instance, sorted',
    params: IdParams,
    query: z.object({ ...Range, sort: z.enum(SCREEN_SORTS).default('name'), order: z.enum(['asc', 'desc']).default('asc') }),
    responses: { 200: { description: 'The screens', data: z.array(ScreenDto) }, 400: bad, 404: missing },
    handler: async (ctx, { params, query }) => ok(await screens(ctx.deps.db, await reportRange(ctx.deps.db, params.id, query), query.sort, query.order)),
  }),
  defineRoute({
    method: 'GET',
    path: `${BASE}/export.csv`,
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'The series, daily or per-screen rows as CSV (header row, ISO times with the offset, formula cells escaped)',
    params: IdParams,
    query: z.object({ ...Range, what: z.enum(['series', 'daily', 'screens']).default('series'), resolution: Resolution }),
    responses: {
      200: {
        description: 'The CSV, streamed',
        content: { 'text/csv': { schema: z.string() } },
        headers: { 'Content-Disposition': { description: 'attachment; filename="<instance>_<from date>_<to date>.csv"' } },
      },
      400: { description: `${bad.description}; too_many_points`, codes: ['validation_failed', 'too_many_points'] },
      404: missing,
    },
    handler: async (ctx, { params, query }) => {
      const db = ctx.deps.db;
      const r = await reportRange(db, params.id, query);
      let columns: string[];
      let rows: Record<string, unknown>[];
      if (query.what === 'daily') {
        rows = await daily(db, r);
        columns = [
          'date',
          'startsAt',
          'endsAt',
          'hours',
          'monitoredMs',
          'averageLevel',
          'peakLevel',
          'warningMs',
          'loudMs',
          'triggerCount',
          'coverage',
          'busiestHour',
        ];
      } else if (query.what === 'screens') {
        rows = await screens(db, r, 'name', 'asc');
        columns = ['screenId', 'name', 'monitoredMs', 'averageLevel', 'peakLevel', 'warningMs', 'loudMs', 'triggerCount', 'coverage'];
      } else {
        rows = (await series(db, r, query.resolution)).points;
        columns = ['startsAt', 'averageLevel', 'peakLevel', 'monitoredMs', 'warningMs', 'loudMs', 'triggerCount'];
      }
      const day = (ms: number) => isoInZone(ms, r.zone).slice(0, 10);
      const base = `${sanitise(r.instanceName)}_${day(r.from)}_${day(r.to)}`;
      const utf8 = `${r.instanceName}_${day(r.from)}_${day(r.to)}.csv`;
      ctx.set('Content-Disposition', `attachment; filename="${base}.csv"; filename*=UTF-8''${encodeURIComponent(utf8)}`);
      ctx.type = 'text/csv; charset=utf-8';
      const csv = stringify({ header: true, columns, escape_formulas: true, cast: { number: (n) => String(n) } });
      ctx.status = 200;
      ctx.body = csv;
      // Written in chunks as the stream drains (a 10 000-point series is one small file anyway).
      (async () => {
        for (const row of rows) if (!csv.write(row)) await new Promise((resolve) => csv.once('drain', resolve));
        csv.end();
      })().catch((err) => csv.destroy(err));
    },
  }),
];
