/**
 * Pairing as the page runs it: asks for a code, shows it with its countdown, polls until an
 * admin approves, enrols and stores the credential. The steps themselves are the pure state
 * machine in pairing.ts; this class owns its timers and the panel.
 */
import { Backoff, retryDelayMs } from './backoff.js';
import type { playerFamilyFromSearch } from './identity.js';
import { formatPairingCode, INITIAL_PAIRING, pairingStep, secondsLeft, type PairingEvent, type PairingState } from './pairing.js';
import type { PlayerApi, PlayerApiError } from './protocol.js';
import type { PlayerStorage } from './storage.js';
import type { PlayerView } from './view.js';

export interface PairingFlowDeps {
  api: PlayerApi;
  storage: PlayerStorage;
  view: PlayerView;
  family: ReturnType<typeof playerFamilyFromSearch>;
  /** This player's version (version.ts). */
  version: string;
  now: () => number;
  /** A credential is stored: the player runs. */
  onPaired: () => void;
}

export class PairingFlow {
  private state: PairingState = INITIAL_PAIRING;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private countdown: ReturnType<typeof setInterval> | null = null;
  private readonly backoff = new Backoff({ baseMs: 2_000, maxMs: 30_000 });
  /** Why the player is pairing again (revoked, code expired...): stays under the new code. */
  private reason: string | null = null;

  constructor(private readonly deps: PairingFlowDeps) {}

  start(message: string | null = null): void {
    const { view } = this.deps;
    this.state = { kind: 'starting', message };
    view.code.textContent = '';
    this.render();
    void this.createSession();
    this.countdown = setInterval(() => this.dispatch({ type: 'tick', now: this.deps.now() }), 1000);
  }

  stop(): void {
    this.reason = null;
    if (this.timer) clearTimeout(this.timer);
    if (this.countdown) clearInterval(this.countdown);
    this.deps.view.pairing.hidden = true;
  }

  private render(): void {
    const { view, now } = this.deps;
    const pairing = this.state;
    view.pairing.hidden = false;
    if (pairing.kind === 'starting' && pairing.message && !pairing.message.startsWith('Waiting')) this.reason = pairing.message;
    view.pairingReason.hidden = !this.reason;
    view.pairingReason.textContent = this.reason ?? '';
    if (pairing.kind === 'showing-code') {
      view.code.textContent = formatPairingCode(pairing.session.code);
      const left = secondsLeft(pairing.session, now());
      view.pairingStatus.textContent = `Code valid for ${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}`;
    } else if (pairing.kind === 'enrolling') {
      view.pairingStatus.textContent = 'Approved. Connecting…';
    } else if (pairing.kind === 'starting') {
      if (!view.code.textContent) view.code.textContent = '···-···';
      view.pairingStatus.textContent = pairing.message ?? 'Getting a pairing code…';
    }
  }

  private dispatch(event: PairingEvent): void {
    const { state, effect } = pairingStep(this.state, event);
    this.state = state;
    this.render();
    // A tick without consequence must not cancel the scheduled poll.
    if (effect.type !== 'none' && this.timer) clearTimeout(this.timer);
    switch (effect.type) {
      case 'create-session':
        this.timer = setTimeout(() => void this.createSession(), this.backoff.failures ? this.backoff.next() : 0);
        break;
      case 'poll':
        this.timer = setTimeout(() => void this.poll(), effect.afterMs);
        break;
      case 'enroll':
        void this.enroll(effect.enrollmentToken);
        break;
      case 'store-credential':
        this.deps.storage.saveIdentity({ screenId: effect.screenId, credential: effect.credential, enrolledAt: new Date().toISOString() });
        this.stop();
        this.deps.onPaired();
        break;
      case 'none':
        break;
    }
  }

  private async createSession(): Promise<void> {
    const { api, family } = this.deps;
    try {
      const session = await api.createPairingSession({
        ...(family ? { playerFamily: family } : {}),
        playerVersion: this.deps.version,
        deviceName: this.deviceName(),
      });
      this.backoff.reset();
      this.dispatch({ type: 'session-created', session });
    } catch (err) {
      const e = err as PlayerApiError;
      this.timer = setTimeout(() => void this.createSession(), retryDelayMs(this.backoff, e.retryAfterSec ?? null));
      this.state = { kind: 'starting', message: e.network ? 'Waiting for the Placard server…' : `The server refused a pairing code: ${e.message}` };
      this.render();
    }
  }

  private async poll(): Promise<void> {
    if (this.state.kind !== 'showing-code') return;
    const { id, pollSecret } = this.state.session;
    try {
      const poll = await this.deps.api.pollPairingSession(id, pollSecret);
      this.dispatch({ type: 'polled', poll, now: this.deps.now() });
    } catch (err) {
      const e = err as PlayerApiError;
      this.dispatch({
        type: 'failed',
        message: e.network ? 'Waiting for the Placard server…' : e.message,
        restart: !e.network && (e.status === 404 || e.status === 401 || e.status === 403),
      });
    }
  }

  private async enroll(enrollmentToken: string): Promise<void> {
    const { api, family } = this.deps;
    try {
      const result = await api.enroll({ enrollmentToken, ...(family ? { playerFamily: family } : {}), playerVersion: this.deps.version });
      this.dispatch({ type: 'enrolled', screenId: result.screenId, credential: result.credential });
    } catch (err) {
      const e = err as PlayerApiError;
      if (e.network && this.state.kind === 'enrolling') {
        // Same token again shortly: it has not been used if the request never arrived.
        setTimeout(() => void this.enroll(enrollmentToken), this.backoff.next());
        return;
      }
      this.dispatch({ type: 'failed', message: `Enrolment failed: ${e.message}`, restart: true });
    }
  }

  private deviceName(): string {
    const ua = navigator.userAgent;
    const os = /Linux/.test(ua) ? 'Linux' : /Windows/.test(ua) ? 'Windows' : /Mac OS/.test(ua) ? 'macOS' : /Android/.test(ua) ? 'Android' : 'Browser';
    return `${this.deps.family === 'desktop-linux' ? 'Kiosk' : 'Browser'} player (${os}, ${screen.width}×${screen.height})`;
  }
}
