import { type SignedIn, signIn } from './auth.js';
import type { TestApp } from './harness.js';
import { pairScreen } from './screens.js';

/**
 * The publishing tests' world: approvals on (unless told), an owner, two publishers and an
 * editor, a paired screen that plays a layout through a schedule, and `as(user)` calls.
 */
export async function publishingWorld(app: TestApp, options: { approvals?: boolean } = {}) {
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const publisher = await signIn(app, { role: 'publisher' });
  const publisher2 = await signIn(app, { role: 'publisher' });
  const as =
    (who: SignedIn) =>
    (method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
      app.json(path, { method, headers: { ...who.headers, ...headers }, ...(json !== undefined ? { json } : {}) });
  const ownerCall = as(owner);
  const menu = (await ownerCall('POST', '/api/v1/playlists', { name: 'Menu' })).body.data;
  const made = await as(editor)('POST', '/api/v1/layouts', {
    name: 'Board',
    zones: [{ id: 'left', name: 'Left', x: 0, y: 0, width: 960, height: 1080, content: { type: 'playlist', playlistId: menu.id } }],
  });
  if (made.status !== 201) throw new Error(JSON.stringify(made.body));
  const layout = made.body.data as { id: string; revision: number };
  const screen = await pairScreen(app, owner, { name: 'Lobby' });
  const s = await ownerCall('POST', '/api/v1/schedules', {
    name: 'Board',
    content: { layoutId: layout.id },
    targets: { screenIds: [screen.screenId] },
    startsAt: new Date(Date.now() - 3600_000).toISOString(),
    endsAt: new Date(Date.now() + 5 * 3600_000).toISOString(),
    timeZone: 'UTC',
  });
  if (s.status !== 201) throw new Error(JSON.stringify(s.body));
  // The venue set its playlist and schedule up before requiring approvals (they play); from here on, drafts.
  if (options.approvals ?? true) {
    const set = await ownerCall('PATCH', '/api/v1/settings', { approvals: { required: true } });
    if (set.status !== 200) throw new Error(JSON.stringify(set.body));
  }
  /** The layout segment the screen plays: its revision number and first zone's width, or null. */
  const playing = async () => {
    const m = await app.json('/api/v1/player/manifest', { headers: screen.headers });
    const seg = m.body.data.timeline.find((x: any) => x.layout?.id === layout.id);
    return seg ? { number: seg.layout.revisionNumber as number, width: seg.layout.zones[0].width as number } : null;
  };
  /** Changes the layout's draft: the first zone's width. */
  const editDraft = async (who: SignedIn, width: number) => {
    const res = await as(who)('PUT', `/api/v1/layouts/${layout.id}/draft`, {
      zones: [{ id: 'left', name: 'Left', x: 0, y: 0, width, height: 1080, content: { type: 'playlist', playlistId: menu.id } }],
    });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body.data;
  };
  return { owner, editor, publisher, publisher2, as, layout, menu, screen, playing, editDraft };
}
