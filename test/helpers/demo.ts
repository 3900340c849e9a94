import type { TestApp } from './harness.js';

/** Polls GET /demo (public) until a seed or reset has finished; fails on a seed error. */
export async function demoSeeded(app: TestApp, timeoutMs = 180_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await app.json('/api/v1/demo');
    if (res.body.data.lastError) throw new Error(res.body.data.lastError);
    if (res.body.data.seededAt && !res.body.data.seeding) return res.body.data;
    if (Date.now() > until) throw new Error('demo still seeding');
    await new Promise((r) => setTimeout(r, 100));
  }
}
