import { statfs, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import { isPostgres } from '../../platform/db/dialect.js';
import { ensureInstanceId } from '../../platform/db/meta.js';
import { API_VERSION, SERVER_VERSION } from '../../version.js';
import { listFiles } from './backup-create.js';
import { knownSchemaVersion } from './backup-format.js';
import { pageBytes, schemaVersion, sqliteVersion } from './database.repo.js';
import { listBackups } from './backup-store.js';
import { registerStatusContributor, statusContributorList, type StatusContributor } from './hooks.js';
import { databaseFileOf, listRuns } from './maintenance.js';
import { getSettings } from './settings.js';

const startedAt = new Date();

const Tool = z.object({ ok: z.boolean(), detail: z.string() });
/** ffmpeg/ffprobe: the check, and the version from the first line of `-version` (null when not usable). */
const BinaryTool = Tool.extend({ version: z.string().nullable() });

/** `ffmpeg version 5.1.6-0+deb12u1 Copyright ...` -> `5.1.6-0+deb12u1`. */
export function toolVersion(check: { ok: boolean; detail: string }, name: 'ffmpeg' | 'ffprobe'): string | null {
  if (!check.ok) return null;
  return new RegExp(`^${name} version (\\S+)`).exec(check.detail)?.[1] ?? null;
}

export const SystemStatus = z.object({
  version: z.string(),
  apiVersion: z.string(),
  instanceId: z.string(),
  serverName: z.string(),
  startedAt: z.string(),
  uptimeSec: z.number(),
  runtime: z.object({
    node: z.string(),
    platform: z.string(),
    arch: z.string(),
    hostname: z.string(),
    loadAverage: z.array(z.number()),
    memoryRssBytes: z.number(),
    systemMemoryFreeBytes: z.number(),
    systemMemoryTotalBytes: z.number(),
  }),
  database: z.object({
    /** Issue 25: the SQLite file, or PostgreSQL (PLACARD_DATABASE_URL). */
    engine: z.enum(['sqlite', 'postgres']),
    /** SQLite's library version, or the PostgreSQL server's. */
    engineVersion: z.string(),
    /** SQLite's library version; null on PostgreSQL. */
    sqliteVersion: z.string().nullable(),
    schemaVersion: z.number(),
    schemaVersionKnown: z.number(),
    sizeBytes: z.number(),
    walBytes: z.number(),
    file: z.string(),
  }),
  storage: z.object({ dataDir: z.string(), freeBytes: z.number().nullable(), totalBytes: z.number().nullable(), usedPercent: z.number().nullable() }),
  tools: z.object({ sharp: Tool.extend({ version: z.string().nullable(), libvips: z.string().nullable() }), ffmpeg: BinaryTool, ffprobe: BinaryTool }),
  backups: z.object({
    count: z.number(),
    totalBytes: z.number(),
    last: z.object({ name: z.string(), createdAt: z.string(), sizeBytes: z.number(), kind: z.string() }).nullable(),
    intervalHours: z.number(),
    nextDueAt: z.string().nullable(),
  }),
  maintenance: z.object({
    restoreInProgress: z.boolean(),
    running: z.array(z.object({ id: z.string(), action: z.string(), progress: z.number(), message: z.string() })),
  }),
  /** Sections other modules contribute (media, jobs, fleet, ...): key -> data. */
  sections: z.record(z.string(), z.object({ title: z.string(), ok: z.boolean(), error: z.string().optional(), data: z.record(z.string(), z.unknown()) })),
});
export type SystemStatus = z.output<typeof SystemStatus>;

async function fileSize(file: string): Promise<number> {
  return (await stat(file).catch(() => null))?.size ?? 0;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
      timer.unref();
    }),
  ]);
}

// The media store on disk, walked at most once a minute (media modules add their own counts).
const diskUsageCache = new Map<string, { at: number; value: Promise<{ files: number; bytes: number }> }>();
function diskUsage(dir: string): Promise<{ files: number; bytes: number }> {
  const hit = diskUsageCache.get(dir);
  if (hit && Date.now() - hit.at < 60_000) return hit.value;
  const value = listFiles(dir).then((files) => ({ files: files.length, bytes: files.reduce((n, f) => n + f.size, 0) }));
  diskUsageCache.set(dir, { at: Date.now(), value });
  return value;
}

const mediaStoreStatus: StatusContributor = {
  key: 'mediaStore',
  title: 'Media store on disk',
  async collect(deps) {
    const [media, uploads, releases] = await Promise.all(['media', 'uploads', 'releases'].map((d) => diskUsage(path.join(deps.config.dataDir, d))));
    return {
      mediaFiles: media!.files,
      mediaBytes: media!.bytes,
      partialUploadFiles: uploads!.files,
      partialUploadBytes: uploads!.bytes,
      releaseFiles: releases!.files,
      releaseBytes: releases!.bytes,
    };
  },
};

export async function collectStatus(deps: AppDeps): Promise<SystemStatus> {
  const { db, config } = deps;
  const settings = await getSettings(db);
  const dbFile = databaseFileOf(deps);
  const postgres = isPostgres(db);
  const [engineVersion, schema, instanceId, dbSize, walSize, fsStats, tools, sharpVersions, backups] = await Promise.all([
    sqliteVersion(db),
    schemaVersion(db),
    ensureInstanceId(db),
    // PostgreSQL: the database's size on its server; no WAL of ours.
    postgres ? pageBytes(db) : fileSize(dbFile),
    postgres ? 0 : fileSize(`${dbFile}-wal`),
    statfs(config.dataDir).catch(() => null),
    deps.tools.check(),
    deps.tools.sharpVersions(),
    listBackups(config.dataDir),
  ]);
  const totalBytes = fsStats ? fsStats.blocks * fsStats.bsize : null;
  const freeBytes = fsStats ? fsStats.bavail * fsStats.bsize : null;
  const last = backups[0] ?? null;
  const intervalMs = settings.backups.intervalHours * 3_600_000;
  const sections: SystemStatus['sections'] = {};
  await Promise.all(
    statusContributorList(deps).map(async (c) => {
      try {
        const data = await withTimeout(Promise.resolve(c.collect(deps)), 3_000, c.key);
        sections[c.key] = { title: c.title, ok: true, data };
      } catch (err) {
        sections[c.key] = { title: c.title, ok: false, error: (err as Error).message, data: {} };
      }
    }),
  );
  const mem = process.memoryUsage();
  return {
    version: SERVER_VERSION,
    apiVersion: API_VERSION,
    instanceId,
    serverName: settings.serverName,
    startedAt: startedAt.toISOString(),
    uptimeSec: Math.round(process.uptime()),
    runtime: {
      node: process.version,
      platform: process.platform,
      arch: process.arch,
      hostname: os.hostname(),
      loadAverage: os.loadavg().map((n) => Math.round(n * 100) / 100),
      memoryRssBytes: mem.rss,
      systemMemoryFreeBytes: os.freemem(),
      systemMemoryTotalBytes: os.totalmem(),
    },
    database: {
      engine: postgres ? 'postgres' : 'sqlite',
      engineVersion,
      sqliteVersion: postgres ? null : engineVersion,
      schemaVersion: schema,
      schemaVersionKnown: knownSchemaVersion(),
      sizeBytes: dbSize,
      walBytes: walSize,
      file: dbFile,
    },
    storage: {
      dataDir: config.dataDir,
      freeBytes,
      totalBytes,
      usedPercent: totalBytes && freeBytes !== null ? Math.round(((totalBytes - freeBytes) / totalBytes) * 1000) / 10 : null,
    },
    tools: {
      sharp: { ...tools.sharp, version: sharpVersions.sharp, libvips: sharpVersions.vips },
      ffmpeg: { ...tools.ffmpeg, version: toolVersion(tools.ffmpeg, 'ffmpeg') },
      ffprobe: { ...tools.ffprobe, version: toolVersion(tools.ffprobe, 'ffprobe') },
    },
    backups: {
      count: backups.length,
      totalBytes: backups.reduce((n, b) => n + b.sizeBytes, 0),
      last: last ? { name: last.name, createdAt: last.createdAt, sizeBytes: last.sizeBytes, kind: last.kind } : null,
      intervalHours: settings.backups.intervalHours,
      nextDueAt: intervalMs > 0 ? new Date(Math.max(Date.now(), (last ? Date.parse(last.createdAt) : Date.now()) + intervalMs)).toISOString() : null,
    },
    maintenance: {
      restoreInProgress: deps.state.restoreInProgress,
      running: listRuns(deps)
        .filter((r) => r.state === 'running')
        .map((r) => ({ id: r.id, action: r.action, progress: r.progress, message: r.message })),
    },
    sections,
  };
}

/** The system module's own status section, registered by its install(). */
export function registerSystemStatus(deps: AppDeps): void {
  registerStatusContributor(deps, mediaStoreStatus);
}
