/**
 * Plugins (issue 22, docs/plugins.md): installing the built-ins with their dependencies, the
 * dependency graph, the instances (an overlay config placed on targets) and the overlays a
 * screen's manifest carries. Every instance change bumps the manifests of the screens reached
 * before and after it (`contentChanged`), so connected players get `manifest.changed`.
 */
import type { Context } from 'koa';
import type { AppDeps } from '../../platform/app-deps.js';
import { ScopeKey } from '../../platform/app-scope.js';
import type { Db } from '../../platform/db/database.js';
import { newId, nowIso } from '../../platform/db/ids.js';
import type { PluginInstancesTable } from '../../platform/db/schema/plugins.js';
import { ApiError, invalidField, invalidReference } from '../../platform/http/errors.js';
import { toPage } from '../../platform/http/pagination.js';
import { checkRevision } from '../../platform/http/revision.js';
import { contentChanged, type OverlayContext, type ManifestOverlay } from '../content/index.js';
import { CATALOG, catalogPlugin, jsonSchemaOf, type InstancePluginId } from './catalog.js';
import {
  assetKind,
  brandBugsUsing,
  deleteInstallation,
  deleteNoiseBuckets,
  insertInstallations,
  claimRevision,
  deleteInstances,
  installation,
  installations,
  instanceCounts,
  instanceIdsOf,
  instanceRow,
  instanceRows,
  reachingInstances,
  saveInstance,
  type TargetRow,
  targetsOf,
} from './plugins.repo.js';
import type { CatalogEntry, InstanceDto, Targets } from './plugins.schemas.js';
import { screensOfTargets, unknownTargets } from '../screens/index.js';

export type Actor = { userId: string; role: string };

/** One line per change in the server log (`audit: 'plugins'`): there is no shared audit table. */
function audit(deps: AppDeps, action: string, actor: Actor, fields: Record<string, unknown>): void {
  deps.logger.info({ audit: 'plugins', action, userId: actor.userId, ...fields }, `plugins: ${action}`);
}

/** What a purge must also remove (the noise reports' roll-ups register here). */
export type PurgeHook = (db: Db, pluginId: string) => Promise<void>;
const PURGE_HOOKS = new ScopeKey('plugins.purge-hooks', (): PurgeHook[] => []);
export function addPluginPurgeHook(deps: AppDeps, hook: PurgeHook): void {
  deps.scope.get(PURGE_HOOKS).push(hook);
}

// ---------------------------------------------------------------- catalog and installation

export async function catalog(db: Db): Promise<CatalogEntry[]> {
  const installed = new Map((await installations(db)).map((r) => [r.plugin_id, r]));
  const counts = await instanceCounts(db);
  return CATALOG.map((p) => {
    const row = installed.get(p.id);
    return {
      id: p.id,
      name: p.name,
      version: p.version,
      description: p.description,
      requires: [...p.requires],
      configSchema: jsonSchemaOf(p.config),
      playerFamilies: [...p.playerFamilies],
      installed: Boolean(row),
      installedAt: row?.installed_at ?? null,
      asDependency: row ? row.as_dependency === 1 : false,
      instanceCount: counts.get(p.id) ?? 0,
    };
  });
}

export async function catalogEntry(db: Db, pluginId: string): Promise<CatalogEntry> {
  const entry = (await catalog(db)).find((e) => e.id === pluginId);
  if (!entry) throw pluginNotFound(pluginId);
  return entry;
}

const pluginNotFound = (id: string) => new ApiError('plugin_not_found', `There is no built-in plugin "${id}"`);

export async function pluginInstalled(db: Db, pluginId: string): Promise<boolean> {
  return Boolean(await installation(db, pluginId));
}

export async function dependencyGraph(db: Db) {
  const installed = new Set((await installations(db)).map((r) => r.plugin_id));
  return {
    nodes: CATALOG.map((p) => ({ id: p.id, installed: installed.has(p.id) })),
    edges: CATALOG.flatMap((p) => p.requires.map((to) => ({ from: p.id, to }))),
  };
}

/** The plugin and what it needs, dependencies first. */
function withDependencies(pluginId: string, seen = new Set<string>()): string[] {
  if (seen.has(pluginId)) return [];
  seen.add(pluginId);
  const p = catalogPlugin(pluginId)!;
  return [...p.requires.flatMap((d) => withDependencies(d, seen)), pluginId];
}

/** Installs a plugin and its dependencies (idempotent); answers its catalog entry. */
export async function install(deps: AppDeps, pluginId: string, actor: Actor): Promise<CatalogEntry> {
  if (!catalogPlugin(pluginId)) throw pluginNotFound(pluginId);
  const plugins = withDependencies(pluginId).map((id) => ({ id, version: catalogPlugin(id)!.version }));
  const added = await insertInstallations(deps.db, plugins, pluginId, actor.userId, nowIso());
  if (added.length) {
    audit(deps, 'install', actor, { pluginId, installed: added });
    await bumpPluginScreens(deps, added);
  }
  return catalogEntry(deps.db, pluginId);
}

/**
 * Uninstalls a plugin: 404 `not_installed` when it is not; 409 `plugin_required` naming the
 * installed plugins that need it. Its instances stay stored (not delivered) unless purged;
 * purging noise-meter removes the noise history too.
 */
export async function uninstall(deps: AppDeps, pluginId: string, purge: boolean, actor: Actor): Promise<void> {
  if (!catalogPlugin(pluginId)) throw pluginNotFound(pluginId);
  const row = await installation(deps.db, pluginId);
  if (!row) throw new ApiError('not_installed', `The plugin "${pluginId}" is not installed`);
  const installed = new Set((await installations(deps.db)).map((r) => r.plugin_id));
  const needers = CATALOG.filter((p) => installed.has(p.id) && p.requires.includes(pluginId)).map((p) => p.id);
  if (needers.length)
    throw new ApiError(
      'plugin_required',
      `"${pluginId}" is needed by ${needers.map((n) => `"${n}"`).join(', ')}; uninstall ${needers.length > 1 ? 'them' : 'it'} first`,
      {
        details: { requiredBy: needers },
      },
    );
  const screens = await pluginScreens(deps.db, pluginId);
  const ids = await instanceIdsOf(deps.db, pluginId);
  await deleteInstallation(deps.db, pluginId, purge, async (trx) => {
    if (pluginId !== 'noise-meter') return;
    await deleteNoiseBuckets(trx);
    for (const hook of deps.scope.get(PURGE_HOOKS)) await hook(trx, pluginId);
  });
  audit(deps, purge ? 'uninstall-purge' : 'uninstall', actor, { pluginId, instances: ids.length });
  await contentChanged(deps, [], screens);
}

/** Every screen an instance of the plugins reaches. */
async function pluginScreens(db: Db, pluginIds: readonly string[] | string): Promise<string[]> {
  const out = new Set<string>();
  for (const pluginId of typeof pluginIds === 'string' ? [pluginIds] : pluginIds) {
    const ids = await instanceIdsOf(db, pluginId);
    const targets = await targetsOf(db, ids);
    for (const list of targets.values()) for (const s of await screensOfTargets(db, list)) out.add(s);
  }
  return [...out];
}

async function bumpPluginScreens(deps: AppDeps, pluginIds: readonly string[]): Promise<void> {
  await contentChanged(deps, [], await pluginScreens(deps.db, pluginIds));
}

// ---------------------------------------------------------------- instances

function targetRows(t: Targets): TargetRow[] {
  return [
    ...(t.all ? [{ type: 'all', id: '' }] : []),
    ...[...new Set(t.screenIds ?? [])].map((id) => ({ type: 'screen', id })),
    ...[...new Set(t.groupIds ?? [])].map((id) => ({ type: 'group', id })),
    ...[...new Set(t.locationIds ?? [])].map((id) => ({ type: 'location', id })),
  ];
}

function targetsDto(rows: readonly TargetRow[]): InstanceDto['targets'] {
  const out: InstanceDto['targets'] = {};
  if (rows.some((r) => r.type === 'all')) out.all = true;
  const of = (type: string) => rows.filter((r) => r.type === type).map((r) => r.id);
  if (of('screen').length) out.screenIds = of('screen');
  if (of('group').length) out.groupIds = of('group');
  if (of('location').length) out.locationIds = of('location');
  return out;
}

function dtoOf(row: PluginInstancesTable, targets: readonly TargetRow[]): InstanceDto {
  return {
    id: row.id,
    pluginId: row.plugin_id,
    name: row.name,
    targets: targetsDto(targets),
    config: JSON.parse(row.config) as Record<string, unknown>,
    revision: row.revision,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A page of the plugin's instances, by name. */
export async function listInstances(
  db: Db,
  pluginId: InstancePluginId,
  cursor: string | undefined,
  limit: number,
): Promise<{ items: InstanceDto[]; nextCursor: string | null }> {
  const page = toPage(await instanceRows(db, pluginId, cursor, limit), limit, (r) => r.name);
  const targets = await targetsOf(
    db,
    page.items.map((r) => r.id),
  );
  return { items: page.items.map((r) => dtoOf(r, targets.get(r.id) ?? [])), nextCursor: page.nextCursor };
}

export async function getInstance(db: Db, pluginId: InstancePluginId, id: string): Promise<InstanceDto> {
  const row = await instanceRow(db, pluginId, id);
  if (!row) throw instanceNotFound();
  return dtoOf(row, (await targetsOf(db, [id])).get(id) ?? []);
}

const instanceNotFound = () => new ApiError('not_found', 'Plugin instance not found');

async function requireInstalled(db: Db, pluginId: string): Promise<void> {
  if (!(await pluginInstalled(db, pluginId)))
    throw new ApiError('plugin_not_installed', `The plugin "${pluginId}" is not installed; install it to add or change its instances`);
}

/** Checks the targets name something and exist, and a brand bug's asset (404 unknown, 400 not an image). */
async function checkInput(db: Db, pluginId: InstancePluginId, input: { targets: Targets; config: unknown }): Promise<void> {
  const t = input.targets;
  if (!t.all && !t.screenIds?.length && !t.groupIds?.length && !t.locationIds?.length)
    throw invalidField('targets', 'Name at least one target: all, screenIds, groupIds or locationIds');
  const refs = await unknownTargets(db, t);
  if (refs.length) throw invalidReference('The body names a target that does not exist', refs);
  if (pluginId === 'brand-bug') {
    const assetId = (input.config as { assetId: string }).assetId;
    const asset = await assetKind(db, assetId);
    if (!asset) throw new ApiError('not_found', `Asset ${assetId} not found`, { details: { path: ['config', 'assetId'] } });
    if (asset.kind !== 'image')
      throw new ApiError('invalid_asset', `"${asset.name}" is a ${asset.kind}; a brand bug shows an image (SVG included)`, {
        details: { issues: [{ location: 'body', path: ['config', 'assetId'], message: 'not an image asset', code: 'invalid_asset' }] },
      });
  }
}

export async function createInstance(
  deps: AppDeps,
  pluginId: InstancePluginId,
  input: { name: string; targets: Targets; config: unknown },
  actor: Actor,
): Promise<InstanceDto> {
  await requireInstalled(deps.db, pluginId);
  await checkInput(deps.db, pluginId, input);
  const now = nowIso();
  const row: PluginInstancesTable = {
    id: newId(),
    plugin_id: pluginId,
    name: input.name,
    config: JSON.stringify(input.config),
    revision: 1,
    created_by: actor.userId,
    created_at: now,
    updated_at: now,
  };
  const targets = targetRows(input.targets);
  await saveInstance(deps.db, row, targets, false);
  audit(deps, 'instance.create', actor, { pluginId, instanceId: row.id, name: row.name });
  await contentChanged(deps, [], await screensOfTargets(deps.db, targets));
  return getInstance(deps.db, pluginId, row.id);
}

export async function updateInstance(
  ctx: Context,
  pluginId: InstancePluginId,
  id: string,
  input: { name: string; targets: Targets; config: unknown },
  actor: Actor,
): Promise<InstanceDto> {
  const deps = ctx.deps;
  const row = await instanceRow(deps.db, pluginId, id);
  if (!row) throw instanceNotFound();
  checkRevision(ctx, row.revision);
  await requireInstalled(deps.db, pluginId);
  await checkInput(deps.db, pluginId, input);
  const before = await screensOfTargets(deps.db, (await targetsOf(deps.db, [id])).get(id) ?? []);
  if (!(await claimRevision(deps.db, id, row.revision)))
    throw new ApiError('version_conflict', 'This instance was changed meanwhile. Reload and apply your change again.', {
      status: ctx.get('if-match') ? 412 : 409,
    });
  const targets = targetRows(input.targets);
  await saveInstance(
    deps.db,
    { ...row, name: input.name, config: JSON.stringify(input.config), revision: row.revision + 1, updated_at: nowIso() },
    targets,
    true,
  );
  audit(deps, 'instance.update', actor, { pluginId, instanceId: id, name: input.name });
  await contentChanged(deps, [], [...before, ...(await screensOfTargets(deps.db, targets))]);
  return getInstance(deps.db, pluginId, id);
}

export async function deleteInstance(ctx: Context, pluginId: InstancePluginId, id: string, actor: Actor): Promise<void> {
  const deps = ctx.deps;
  const row = await instanceRow(deps.db, pluginId, id);
  if (!row) throw instanceNotFound();
  checkRevision(ctx, row.revision);
  const before = await screensOfTargets(deps.db, (await targetsOf(deps.db, [id])).get(id) ?? []);
  await deleteInstances(deps.db, [id]);
  audit(deps, 'instance.delete', actor, { pluginId, instanceId: id, name: row.name });
  await contentChanged(deps, [], before);
}

/** The screens an instance of the plugin reaches now, sorted; null when there is no such instance. */
export async function instanceScreenIds(db: Db, instanceId: string, pluginId: string): Promise<string[] | null> {
  const row = await instanceRow(db, pluginId, instanceId);
  if (!row) return null;
  return screensOfTargets(db, (await targetsOf(db, [instanceId])).get(instanceId) ?? []);
}

// ---------------------------------------------------------------- manifest overlays and seams

/** The overlays of installed plugins reaching a screen (content/overlays.ts provider). */
export async function screenOverlays(db: Db, ctx: OverlayContext): Promise<ManifestOverlay[]> {
  const rows = await reachingInstances(db, ctx.targets);
  const out: ManifestOverlay[] = [];
  for (const r of rows) {
    const config = JSON.parse(r.config) as Record<string, unknown>;
    const entry: ManifestOverlay = { instanceId: r.id, pluginId: r.plugin_id, name: r.name, revision: r.revision, config };
    if (r.plugin_id === 'brand-bug') {
      const assetId = String(config.assetId);
      const sizePct = typeof config.sizePct === 'number' ? config.sizePct : 12;
      const box = { width: Math.ceil((ctx.screen.display.width * sizePct) / 100), height: 1 };
      const media = await ctx.image(assetId, box, { pluginId: r.plugin_id, instanceId: r.id });
      if (!media) continue;
      const { purpose: _p, ...logo } = media;
      entry.logo = logo;
    }
    out.push(entry);
  }
  return out;
}

/** Brand bugs using an asset block its deletion (409 naming them), like playlists do. */
export async function assetUsages(db: Db, assetIds: readonly string[]) {
  return (await brandBugsUsing(db, assetIds)).map((r) => ({ assetId: r.assetId, type: 'brand-bug', id: r.id, name: r.name }));
}
