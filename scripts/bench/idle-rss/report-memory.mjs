// Loaded into the measured process with `node --import` by scripts/bench/idle-rss.ts (the
// server's code knows nothing of it): on SIGUSR2 it writes process.memoryUsage() and V8's
// heap spaces as JSON to $IDLE_RSS_REPORT. Costs a few KiB, no timer, no inspector.
import { writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';

const out = process.env.IDLE_RSS_REPORT;
if (out) {
  process.on('SIGUSR2', () => {
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]));
    writeFileSync(out, JSON.stringify({ memory: process.memoryUsage(), spaces }));
  });
}
