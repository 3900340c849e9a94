/**
 * The fleet's database before the server starts (its own migrations, then N screens,
 * one device credential each through issueDeviceCredential, and one group holding them
 * all (or `contexts` groups, screen i in group i mod contexts), in one transaction), and the
 * content through the admin API once it runs: the first owner (/auth/setup), two images
 * uploaded with tus, a playlist showing the first one assigned to every group. The mid-run
 * change adds the second image to the playlist.
 */
import sharp from 'sharp';
import { migrate, openDatabase } from '../../../server/src/platform/db/database.js';
import { issueDeviceCredential } from '../../../server/src/modules/screens/device-auth.js';
import { newId, newScreenRow, nowIso } from '../../../server/src/modules/screens/screens.repo.js';

export interface SeededFleet {
  groupIds: string[];
  screens: { screenId: string; credential: string }[];
}

export async function seedFleet(dbFile: string, players: number, contexts = 1): Promise<SeededFleet> {
  const database = openDatabase(dbFile);
  try {
    await migrate(database.db);
    const now = nowIso();
    const groupIds = Array.from({ length: contexts }, () => newId());
    const screens: SeededFleet['screens'] = [];
    await database.db.transaction().execute(async (trx) => {
      for (const [i, id] of groupIds.entries()) {
        const name = contexts === 1 ? 'Fleet' : `Fleet ${i + 1}`;
        await trx
          .insertInto('screen_groups')
          .values({ id, name, description: 'fleet simulator', policy: null, span: null, created_at: now, updated_at: now })
          .execute();
      }
      for (let i = 0; i < players; i++) {
        const screenId = newId();
        await trx
          .insertInto('screens')
          .values(newScreenRow({ id: screenId, name: `fleet-${String(i).padStart(5, '0')}` }, now))
          .execute();
        await trx
          .insertInto('screen_group_members')
          .values({ group_id: groupIds[i % contexts]!, screen_id: screenId, added_at: now })
          .execute();
        screens.push({ screenId, credential: await issueDeviceCredential(trx, screenId) });
      }
    });
    return { groupIds, screens };
  } finally {
    await database.close();
  }
}

/** A PNG of one colour with a white bar, `width`×`height`. */
export async function samplePng(rgb: { r: number; g: number; b: number }, width = 640, height = 360): Promise<Buffer> {
  const bar = await sharp({ create: { width: width / 2, height: height / 8, channels: 3, background: { r: 255, g: 255, b: 255 } } })
    .png()
    .toBuffer();
  return sharp({ create: { width, height, channels: 3, background: rgb } })
    .composite([{ input: bar, top: height / 2, left: width / 4 }])
    .png()
    .toBuffer();
}

/** A console session on the running server (cookie + CSRF token), JSON calls with it. */
export class Admin {
  private constructor(
    private readonly base: string,
    private readonly headers: Record<string, string>,
  ) {}

  /** The first owner, through /auth/setup on the fresh database. */
  static async setUp(base: string): Promise<Admin> {
    const res = await fetch(`${base}/api/v1/auth/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'fleet@example.test', password: 'correct horse battery staple', displayName: 'Fleet bench' }),
    });
    const body = (await res.json()) as { data: { csrfToken: string } };
    if (res.status !== 200 && res.status !== 201) throw new Error(`auth/setup answered ${res.status}: ${JSON.stringify(body)}`);
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .filter((pair) => !pair.endsWith('='))
      .join('; ');
    return new Admin(base, { cookie, 'x-csrf-token': body.data.csrfToken });
  }

  async call<T = unknown>(method: string, path: string, json?: unknown): Promise<T> {
    const res = await fetch(this.base + path, {
      method,
      headers: { ...this.headers, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    return (text ? (JSON.parse(text) as { data: T }).data : undefined) as T;
  }

  /** Uploads (tus creation + one PATCH + complete) and waits until the asset is ready. */
  async uploadImage(bytes: Buffer, filename: string, timeoutMs = 120_000): Promise<string> {
    const tus = { 'tus-resumable': '1.0.0' };
    const createdRes = await fetch(`${this.base}/api/v1/uploads`, {
      method: 'POST',
      headers: {
        ...this.headers,
        ...tus,
        'upload-length': String(bytes.length),
        'upload-metadata': `filename ${Buffer.from(filename).toString('base64')}`,
      },
    });
    if (createdRes.status !== 201) throw new Error(`upload creation answered ${createdRes.status}: ${await createdRes.text()}`);
    const location = createdRes.headers.get('location')!;
    const patched = await fetch(new URL(location, this.base), {
      method: 'PATCH',
      headers: { ...this.headers, ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: bytes,
    });
    if (patched.status !== 204) throw new Error(`upload PATCH answered ${patched.status}: ${await patched.text()}`);
    const uploadId = location.split('/').pop()!;
    const asset = await this.call<{ id: string }>('POST', `/api/v1/uploads/${uploadId}/complete`, {});
    const until = Date.now() + timeoutMs;
    for (;;) {
      const a = await this.call<{ state: string }>('GET', `/api/v1/assets/${asset.id}`);
      if (a.state === 'ready') return asset.id;
      if (a.state !== 'processing') throw new Error(`asset ${filename} ended ${a.state}`);
      if (Date.now() > until) throw new Error(`asset ${filename} still processing after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

export interface FleetContent {
  playlistId: string;
  firstAssetId: string;
  /** Added to the playlist by the mid-run change. */
  changeAssetId: string;
}

/** Two images, a playlist with the first, assigned to each of the fleet's groups. */
export async function createContent(admin: Admin, groupIds: readonly string[]): Promise<FleetContent> {
  const firstAssetId = await admin.uploadImage(await samplePng({ r: 220, g: 30, b: 40 }), 'fleet-red.png');
  const changeAssetId = await admin.uploadImage(await samplePng({ r: 30, g: 60, b: 220 }), 'fleet-blue.png');
  const playlist = await admin.call<{ id: string }>('POST', '/api/v1/playlists', { name: 'Fleet', items: [{ assetId: firstAssetId }] });
  for (const groupId of groupIds) await admin.call('PUT', `/api/v1/screen-groups/${groupId}/playlist-assignment`, { playlistId: playlist.id });
  return { playlistId: playlist.id, firstAssetId, changeAssetId };
}

/** The content change players must pick up: the second image joins the playlist. */
export async function changeContent(admin: Admin, content: FleetContent): Promise<void> {
  await admin.call('POST', `/api/v1/playlists/${content.playlistId}/items`, { assetId: content.changeAssetId });
}
