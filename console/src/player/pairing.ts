/**
 * The pairing flow as a pure state machine: pairing code shown -> approved -> enrolled.
 * The page feeds it events (a created session, a poll answer, an enrolment, errors) and
 * performs the effect it answers; tests drive it without a browser.
 */
import type { PairingPoll, PairingSession } from './protocol.js';

export type PairingState =
  | { kind: 'starting'; message: string | null }
  | { kind: 'showing-code'; session: PairingSession }
  | { kind: 'enrolling'; session: PairingSession; enrollmentToken: string }
  | { kind: 'enrolled'; screenId: string; credential: string };

export type PairingEvent =
  | { type: 'session-created'; session: PairingSession }
  | { type: 'polled'; poll: PairingPoll; now: number }
  | { type: 'enrolled'; screenId: string; credential: string }
  | { type: 'failed'; message: string; restart: boolean }
  | { type: 'tick'; now: number };

export type PairingEffect =
  | { type: 'create-session' }
  | { type: 'poll'; afterMs: number }
  | { type: 'enroll'; enrollmentToken: string }
  | { type: 'store-credential'; screenId: string; credential: string }
  | { type: 'none' };

export interface Transition {
  state: PairingState;
  effect: PairingEffect;
}

export const INITIAL_PAIRING: PairingState = { kind: 'starting', message: null };

function pollDelay(session: PairingSession): number {
  const sec = Number.isFinite(session.pollIntervalSec) && session.pollIntervalSec > 0 ? session.pollIntervalSec : 3;
  return Math.min(30, Math.max(1, sec)) * 1000;
}

export function pairingStep(state: PairingState, event: PairingEvent): Transition {
  switch (event.type) {
    case 'session-created':
      return { state: { kind: 'showing-code', session: event.session }, effect: { type: 'poll', afterMs: pollDelay(event.session) } };
    case 'polled': {
      if (state.kind !== 'showing-code') return { state, effect: { type: 'none' } };
      const { poll } = event;
      if (poll.status === 'approved' && poll.enrollmentToken) {
        return {
          state: { kind: 'enrolling', session: state.session, enrollmentToken: poll.enrollmentToken },
          effect: { type: 'enroll', enrollmentToken: poll.enrollmentToken },
        };
      }
      if (poll.status === 'rejected')
        return { state: { kind: 'starting', message: 'Pairing was declined. Here is a new code.' }, effect: { type: 'create-session' } };
      if (poll.status === 'expired' || poll.status === 'enrolled' || Date.parse(state.session.expiresAt) <= event.now) {
        return { state: { kind: 'starting', message: 'The code expired. Here is a new one.' }, effect: { type: 'create-session' } };
      }
      return { state, effect: { type: 'poll', afterMs: pollDelay(state.session) } };
    }
    case 'enrolled':
      return {
        state: { kind: 'enrolled', screenId: event.screenId, credential: event.credential },
        effect: { type: 'store-credential', screenId: event.screenId, credential: event.credential },
      };
    case 'failed':
      // A lost session (404, 401 on enrol: token used or expired) means a new code; a
      // network failure keeps the code on screen and tries again.
      if (event.restart || state.kind === 'enrolling') return { state: { kind: 'starting', message: event.message }, effect: { type: 'create-session' } };
      if (state.kind === 'showing-code') return { state, effect: { type: 'poll', afterMs: pollDelay(state.session) } };
      return { state: { kind: 'starting', message: event.message }, effect: { type: 'create-session' } };
    case 'tick':
      if (state.kind === 'showing-code' && Date.parse(state.session.expiresAt) <= event.now) {
        return { state: { kind: 'starting', message: 'The code expired. Here is a new one.' }, effect: { type: 'create-session' } };
      }
      return { state, effect: { type: 'none' } };
  }
}

/** `K7QX2M` -> `K7Q-X2M`: two groups of three read better across a room. */
export function formatPairingCode(code: string): string {
  const clean = code.replace(/[^0-9a-z]/gi, '').toUpperCase();
  if (clean.length === 6) return `${clean.slice(0, 3)}-${clean.slice(3)}`;
  return clean;
}

/** Seconds left before the code expires, never negative. */
export function secondsLeft(session: PairingSession, now: number): number {
  return Math.max(0, Math.floor((Date.parse(session.expiresAt) - now) / 1000));
}
