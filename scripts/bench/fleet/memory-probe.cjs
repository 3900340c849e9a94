/**
 * Loaded into the server by the fleet simulator (`node --require`): every 500 ms it writes
 * the server's own view of its memory to PLACARD_BENCH_MEMORY_FILE, so the simulator can
 * split RSS into V8's heap (used and reserved), memory outside it that V8 knows of
 * (Buffers and other ArrayBuffers) and the rest (native allocations, code, libraries).
 * `peak` is the reading with the highest RSS so far. Not part of the server.
 */
const { writeFileSync, renameSync } = require('node:fs');
const { isMainThread } = require('node:worker_threads');

const file = process.env.PLACARD_BENCH_MEMORY_FILE;
// --require runs in worker threads too (the checkpointer's): their heap is not the server's.
if (file && isMainThread) {
  let peak = null;
  const read = () => {
    const m = process.memoryUsage();
    return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers };
  };
  const timer = setInterval(() => {
    const now = read();
    if (!peak || now.rss > peak.rss) peak = now;
    try {
      writeFileSync(`${file}.tmp`, JSON.stringify({ now, peak }));
      renameSync(`${file}.tmp`, file);
    } catch {
      /* the data directory went away: the run is over */
    }
  }, 500);
  timer.unref();
}
