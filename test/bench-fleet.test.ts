import t from 'tap';
import { runFleet } from '../scripts/bench/fleet/run.js';

/**
 * The fleet simulator (scripts/bench/fleet.ts) on a tiny fleet: the real server as a
 * child process, 20 players at a 2 s cadence for 8 s with the content change in the
 * middle. Only the report's correctness facts are checked; its timings are figures for
 * docs/performance.md, never asserted.
 */
t.test('fleet simulator: every player heartbeats, gets the change, and no bucket is lost', async (t) => {
  t.setTimeout(240_000);
  const r = await runFleet({ players: 20, cadenceSec: 2, seconds: 8, noiseShare: 0.2 });
  t.equal(r.players, 20);
  t.equal(r.noisyPlayers, 4, 'a fifth of the players send noise buckets');
  t.equal(r.playersHeartbeated, 20, 'every player heartbeated');
  t.equal(r.heartbeats.sent, 80, 'four heartbeats each (8 s at a 2 s cadence)');
  t.equal(r.heartbeats.ok, r.heartbeats.sent, 'every heartbeat answered 200');
  t.same(r.errors, { total: 0, byKind: {}, socketDrops: 0 }, 'no error, no socket dropped');
  t.equal(r.change.playersGotIt, 20, 'every player fetched the changed manifest');
  t.not(r.change.mediaLastMs, null, 'and cached its new media');
  t.equal(r.change.pushedPlayers, 20, 'every socket got manifest.changed');
  t.ok(r.media.downloads >= 40, 'each player downloaded both images');
  t.equal(r.buckets.generated, 4 * 4 * 3, 'three new buckets per noisy heartbeat');
  t.equal(r.buckets.acknowledged, r.buckets.generated, 'all acknowledged');
  t.equal(r.buckets.counted, r.buckets.generated, 'buckets sent == buckets counted in the database');
  t.same(r.server.exit, { code: 0, signal: null }, 'the server stopped cleanly');
  t.ok(r.server.idleRssMiB > 0 && r.server.rssWithSocketsMiB > 0, 'the server was measured from /proc');
});
