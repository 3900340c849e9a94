import type { Test } from 'tap';
import { WebSocket } from 'ws';
import type { SignedIn } from './auth.js';
import type { TestApp } from './harness.js';

export interface PairedScreen {
  screenId: string;
  credential: string;
  /** Authorization header for the device credential. */
  headers: { authorization: string };
}

/**
 * Pairs and enrols a screen through the real protocol (DESIGN.md section 6): pairing
 * session, resolve, approve, poll, enroll. `admin` is a signed-in admin or owner.
 */
export async function pairScreen(
  app: TestApp,
  admin: SignedIn,
  options: { name?: string; locationId?: string; groupIds?: string[]; playerFamily?: string; playerVersion?: string } = {},
): Promise<PairedScreen> {
  const started = await app.json('/api/v1/player/pairing-sessions', {
    method: 'POST',
    json: { playerFamily: options.playerFamily ?? 'desktop-linux', playerVersion: options.playerVersion ?? '1.0.0', deviceName: 'test box' },
  });
  if (started.status !== 201) throw new Error(`pairing-sessions: ${started.status} ${JSON.stringify(started.body)}`);
  const { id, code, pollSecret } = started.body.data;
  const resolved = await app.json('/api/v1/screens/pairing/resolve', { method: 'POST', headers: admin.headers, json: { code } });
  if (resolved.status !== 200) throw new Error(`resolve: ${resolved.status} ${JSON.stringify(resolved.body)}`);
  const approved = await app.json(`/api/v1/screens/pairing/${id}/approve`, {
    method: 'POST',
    headers: admin.headers,
    json: {
      name: options.name ?? 'Lobby',
      ...(options.locationId ? { locationId: options.locationId } : {}),
      ...(options.groupIds ? { groupIds: options.groupIds } : {}),
    },
  });
  if (approved.status !== 200) throw new Error(`approve: ${approved.status} ${JSON.stringify(approved.body)}`);
  const polled = await app.json(`/api/v1/player/pairing-sessions/${id}`, { headers: { 'x-pairing-secret': pollSecret } });
  if (polled.status !== 200 || polled.body.data.status !== 'approved') throw new Error(`poll: ${polled.status} ${JSON.stringify(polled.body)}`);
  const enrolled = await app.json('/api/v1/player/enroll', { method: 'POST', json: { enrollmentToken: polled.body.data.enrollmentToken } });
  if (enrolled.status !== 201) throw new Error(`enroll: ${enrolled.status} ${JSON.stringify(enrolled.body)}`);
  const { screenId, credential } = enrolled.body.data;
  return { screenId, credential, headers: { authorization: `Bearer ${credential}` } };
}

/** Opens the player socket with the device credential; collects messages. */
export async function openSocket(t: Test, app: TestApp, credential: string) {
  const ws = new WebSocket(`${app.url.replace(/^http/, 'ws')}/api/v1/player/socket`, ['placard.v1'], { headers: { authorization: `Bearer ${credential}` } });
  const messages: any[] = [];
  const arrived = new Map<any, number>();
  const waiters: { match: (m: any) => boolean; resolve: (m: any) => void }[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    messages.push(m);
    arrived.set(m, Date.now());
    for (const w of [...waiters]) if (w.match(m)) waiters.splice(waiters.indexOf(w), 1), w.resolve(m);
  });
  await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
  t.teardown(() => ws.close());
  /** The first matching message, which must arrive within `ms` of `since` (taken before the request that causes it). */
  const next = (match: (m: any) => boolean, since: number, ms = 1000) =>
    new Promise<any>((resolve, reject) => {
      const late = (m: any) => reject(new Error(`the message came ${arrived.get(m)! - since} ms after the request, more than ${ms} ms`));
      const found = messages.find(match);
      if (found) return arrived.get(found)! - since <= ms ? resolve(found) : late(found);
      const timer = setTimeout(
        () => reject(new Error(`no matching message within ${ms} ms of the request; got ${JSON.stringify(messages)}`)),
        Math.max(0, since + ms - Date.now()),
      );
      waiters.push({ match, resolve: (m) => (clearTimeout(timer), arrived.get(m)! - since <= ms ? resolve(m) : late(m)) });
    });
  return { ws, messages, next };
}
