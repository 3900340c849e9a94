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
