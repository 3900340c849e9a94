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

t.test('fleet simulator: several instances need PostgreSQL, refused before anything is made', async (t) => {
  await t.rejects(runFleet({ players: 4, cadenceSec: 2, seconds: 2, noiseShare: 0, instances: 2 }), /--instances 2 needs --database-url/);
  await t.rejects(runFleet({ players: 4, cadenceSec: 2, seconds: 2, noiseShare: 0, instances: 0 }), /--instances wants a whole number/);
  await t.rejects(runFleet({ players: 4, cadenceSec: 2, seconds: 2, noiseShare: 0, databaseUrl: 'mysql://x/y' }), /--database-url wants a postgres:\/\/ URL/);
});

const base = process.env.PLACARD_TEST_DATABASE_URL;
t.test(
  'fleet simulator on PostgreSQL, two instances: players on both get the change made through the first',
  { skip: base ? false : 'needs PostgreSQL: set PLACARD_TEST_DATABASE_URL' },
  async (t) => {
    t.setTimeout(240_000);
    const r = await runFleet({ players: 20, cadenceSec: 2, seconds: 8, noiseShare: 0.2, databaseUrl: base!, instances: 2 });
    t.equal(r.database, 'postgres');
    t.same(
      r.server.instances.map((s) => s.players),
      [10, 10],
      'half the players on each instance',
    );
    t.equal(r.heartbeats.ok, 80, 'every heartbeat answered 200');
    t.same(r.errors, { total: 0, byKind: {}, socketDrops: 0 }, 'no error, no socket dropped');
    t.equal(r.change.pushedPlayers, 20, 'every socket, on either instance, got manifest.changed');
    t.equal(r.change.playersGotIt, 20, 'every player fetched the changed manifest');
    t.not(r.change.mediaLastMs, null, 'and cached its new media');
    t.equal(r.buckets.counted, r.buckets.generated, 'buckets sent == buckets counted in the database');
    t.same(
      r.server.instances.map((s) => s.exit),
      [
        { code: 0, signal: null },
        { code: 0, signal: null },
      ],
      'both instances stopped cleanly',
    );
    const left = await (async () => {
      const pg = (await import('pg')).default;
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      try {
        return (await c.query(`select count(*)::int as n from pg_database where datname like 'placard_fleet_${process.pid}_%'`)).rows[0].n as number;
      } finally {
        await c.end();
      }
    })();
    t.equal(left, 0, "the run's database was dropped");
  },
);
