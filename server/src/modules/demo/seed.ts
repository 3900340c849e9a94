/**
 * The demo data set (docs/demo.md): what it is, seeding it, and wiping the venue content
 * before a reset. Sample files go through the media module's normal ingest path (store,
 * asset row, processing job); content rows are written with the content module's own
 * helpers, and the screens they reach get their manifest revision bumped afterwards.
 */
import { copyFile, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { CLOSE_CODES } from '../../platform/realtime/hub.js';
import { sniffFile } from '../../platform/media/sniff.js';
import { contentChanged, type DepRef } from '../content/index.js';
import { assertRefs, normalizeContent, LayoutContentSchema } from '../content/index.js';
import { newItemRow, playlistDraft, playlistPublishable, type NewItem } from '../content/index.js';
import { prepare as prepareSchedule, scheduleSnapshotOf, writeTargets } from '../schedules/index.js';
import { insertPublication } from '../../platform/publications.js';
import { fireAssetChange } from '../media/index.js';
import type { MediaService } from '../media/index.js';
import { newScreenRow, screenshotDir } from '../screens/index.js';
import { nowIso as now } from '../../platform/db/ids.js';
import {
  insertAssignment,
  insertGroup,
  insertLocation,
  insertPlaylist,
  insertPublishedLayout,
  insertSchedule,
  insertScreenInGroup,
  wipeVenue,
} from './demo.repo.js';
import { ensureDemoSources, type DemoSource } from './sample-media.js';

/** `meta` keys: when the demo was first seeded, when it was last reset. */
export const META_SEEDED_AT = 'demo.seeded_at';
export const META_LAST_RESET_AT = 'demo.last_reset_at';

/** The names of the data set (tests and docs/demo.md read them from here). */
export const DEMO = {
  location: { name: 'Demo Café', timeZone: 'Europe/London', address: '1 Example Street, London' },
  group: 'Demo Café screens',
  screens: [
    { key: 'counter', name: 'Counter', orientation: 'landscape' },
    { key: 'window', name: 'Window', orientation: 'landscape' },
    { key: 'menu', name: 'Menu board', orientation: 'portrait' },
  ],
  playlists: { loop: 'Café loop', menu: 'Menu board' },
  layout: 'Café lunch split',
  schedule: { name: 'Weekday lunch', rrule: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR', startsAt: '2025-01-06T11:30:00', endsAt: '2025-01-06T14:00:00' },
  assetTag: 'demo',
} as const;

/**
 * Copies the sources into the store's temp directory and ingests them like uploads
 * (the copy is moved into the store; the source stays for the next reset).
 */
async function ingestSources(media: MediaService, sources: readonly DemoSource[], signal?: AbortSignal): Promise<Map<DemoSource['key'], string>> {
  const ids = new Map<DemoSource['key'], string>();
  await mkdir(media.store.tmpDir, { recursive: true });
  for (const source of sources) {
    signal?.throwIfAborted();
    const tmp = media.store.tempPath();
    try {
      await copyFile(source.file, tmp);
      const sniffed = await sniffFile(tmp);
      if (!sniffed) throw new Error(`demo source ${path.basename(source.file)} is not recognised media`);
      const id = await media.ingestFile({
        file: tmp,
        kind: sniffed.kind,
        contentType: sniffed.contentType,
        name: source.name,
        originalFilename: path.basename(source.file),
        folderId: null,
        tags: [DEMO.assetTag],
        createdBy: null,
      });
      ids.set(source.key, id);
    } finally {
      await rm(tmp, { force: true });
    }
  }
  return ids;
}

/** Seeds the data set: sample media first (outside any transaction), then one transaction for the venue. */
export async function seedDemo(deps: AppDeps, media: MediaService, signal?: AbortSignal): Promise<void> {
  const sources = await ensureDemoSources(deps, signal);
  const assets = await ingestSources(media, sources, signal);
  signal?.throwIfAborted();
  const asset = (key: DemoSource['key']) => assets.get(key)!;
  const t = now();
  const locationId = uuidv7();
  const groupId = uuidv7();
  const screenIds = new Map<string, string>(DEMO.screens.map((s) => [s.key, uuidv7()]));
  const loopId = uuidv7();
  const menuId = uuidv7();
  const layoutId = uuidv7();
  const scheduleId = uuidv7();

  await deps.db.transaction().execute(async (trx) => {
    const db = trx as unknown as Db;
    await insertLocation(db, {
      id: locationId,
      name: DEMO.location.name,
      address: DEMO.location.address,
      time_zone: DEMO.location.timeZone,
      latitude: null,
      longitude: null,
      notes: 'Demo data: reset it from the console banner.',
      created_at: t,
      updated_at: t,
    });
    await insertGroup(db, {
      id: groupId,
      name: DEMO.group,
      description: 'Every screen of the demo café',
      policy: null,
      span: null,
      created_at: t,
      updated_at: t,
    });
    for (const s of DEMO.screens) {
      const id = screenIds.get(s.key)!;
      // No player yet: the screen stays "pending" until a /play page is paired onto it
      // (approve the pairing with this screenId to adopt it).
      const screen = newScreenRow(
        {
          id,
          name: s.name,
          location_id: locationId,
          orientation: s.orientation,
          tags: JSON.stringify(['demo']),
          notes: 'Demo screen: pair a player and approve it onto this screen to see the demo content.',
        },
        t,
      );
      await insertScreenInGroup(db, screen, groupId, t);
    }

    const playlist = async (id: string, name: string, description: string, items: NewItem[]) => {
      const row = { id, name, description, revision: 1, tag_rule: null, created_by: null, created_at: t, updated_at: t, published_publication_id: null };
      await insertPlaylist(
        db,
        row,
        items.map((item, i) => newItemRow(id, item, i)),
      );
      // Screens play publications only (issue 20): the demo's playlists are published as seeded.
      await playlistPublishable.publish(db, id, (await playlistDraft(db, id)).snapshot, null, 'Demo content', 'edit');
    };
    const fade = { type: 'fade' as const, durationMs: 600 };
    await playlist(loopId, DEMO.playlists.loop, 'Welcome slide, the lunch specials (weekdays 11:00-15:00 only) and a short clip', [
      { assetId: asset('welcome'), durationMs: 10_000, transition: fade },
      // Day-parting: the specials only show on weekday lunchtimes.
      { assetId: asset('specials'), durationMs: 10_000, transition: fade, dayparts: [{ days: [1, 2, 3, 4, 5], from: '11:00', to: '15:00' }] },
      { assetId: asset('clip'), durationMs: null, transition: fade },
    ]);
    await playlist(menuId, DEMO.playlists.menu, 'Portrait board: opening hours and the specials', [
      { assetId: asset('hours'), durationMs: 15_000, transition: fade },
      { assetId: asset('specials'), durationMs: 10_000, transition: fade },
    ]);

    const content = normalizeContent(
      LayoutContentSchema.parse({
        width: 1920,
        height: 1080,
        background: { color: '#111827' },
        zones: [
          { id: 'main', name: 'Main', x: 0, y: 0, width: 1440, height: 1080, fit: 'contain', content: { type: 'playlist', playlistId: loopId } },
          { id: 'side', name: 'Side', x: 1440, y: 0, width: 480, height: 1080, fit: 'cover', content: { type: 'asset', assetId: asset('hours') } },
        ],
      }),
    );
    await assertRefs(db, content);
    const revisionId = uuidv7();
    const layout = {
      id: layoutId,
      name: DEMO.layout,
      description: 'Main zone with the café loop, side zone with the opening hours',
      revision: 2,
      draft: JSON.stringify(content),
      published_revision_id: null,
      published_at: null,
      preview_sha256: null,
      preview_content_type: null,
      preview_updated_at: null,
      created_by: null,
      created_at: t,
      updated_at: t,
    };
    const revision = {
      id: revisionId,
      layout_id: layoutId,
      number: 1,
      content: JSON.stringify(content),
      note: 'Demo data',
      created_by: null,
      created_at: t,
      source: 'edit',
    };
    await insertPublishedLayout(db, layout, revision, t);

    // Weekday lunch on every screen of the location, in each screen's own time zone.
    const { row, targets } = await prepareSchedule(db, {
      name: DEMO.schedule.name,
      content: { layoutId },
      targets: { screenIds: [], groupIds: [], locationIds: [locationId] },
      startsAt: DEMO.schedule.startsAt,
      endsAt: DEMO.schedule.endsAt,
      rrule: DEMO.schedule.rrule,
      timeZone: null,
      priority: 10,
      enabled: true,
    });
    await insertSchedule(db, { id: scheduleId, ...row, revision: 1, created_by: null, created_at: t, updated_at: t, draft: null, published_at: t });
    await writeTargets(db, scheduleId, targets);
    await insertPublication(db, { type: 'schedule', contentId: scheduleId, snapshot: scheduleSnapshotOf(row, targets), note: '', source: 'edit', by: null });

    // Something always plays: the group's default playlist, and the portrait board its own.
    await insertAssignment(db, { target_type: 'group', target_id: groupId, playlist_id: loopId, updated_by: null, updated_at: t });
    await insertAssignment(db, { target_type: 'screen', target_id: screenIds.get('menu')!, playlist_id: menuId, updated_by: null, updated_at: t });
  });

  const refs: DepRef[] = [
    { kind: 'playlist', id: loopId },
    { kind: 'playlist', id: menuId },
    { kind: 'layout', id: layoutId },
    { kind: 'schedule', id: scheduleId },
  ];
  await contentChanged(deps, refs, [...screenIds.values()]);
}

/**
 * Removes the venue content in one transaction (demo.repo.ts's wipeVenue: schedules,
 * assignments, layouts, playlists, assets, library folders/collections/tags, screens,
 * pairing sessions, groups, locations; users, sessions, tokens and settings stay). After
 * the commit: media files nothing references any more are removed (the media module's rule), layout previews and screenshots are deleted, and sockets of
 * removed screens are closed as revoked (their players pair again).
 */
export async function wipeDemo(deps: AppDeps, media: MediaService): Promise<void> {
  const db = deps.db;
  const removed = await wipeVenue(db);
  await media.removeOrphans(removed.shas);
  for (const id of removed.layoutIds) await rm(path.join(deps.config.dataDir, 'layout-previews', `${id}.png`), { force: true });
  for (const sha of removed.screenshots) if (/^[0-9a-f]{64}$/.test(sha)) await rm(path.join(screenshotDir(deps.config.dataDir), sha), { force: true });
  for (const id of removed.screenIds) deps.realtime?.closeScreen(id, CLOSE_CODES.revoked, 'demo data reset: pair again');
  await fireAssetChange(deps, { change: 'deleted', assetIds: removed.assetIds });
}
