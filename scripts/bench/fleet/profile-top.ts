/**
 * The functions with the most self time in a V8 CPU profile (node --cpu-prof), and the
 * same summed by file: a first look at where the server's time went in a fleet run.
 *   npx tsx scripts/bench/fleet/profile-top.ts <file.cpuprofile> [--top 25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const file = process.argv[2];
if (!file) throw new Error('usage: profile-top.ts <file.cpuprofile> [--top 25]');
const i = process.argv.indexOf('--top');
const top = i > 0 ? Number(process.argv[i + 1]) : 25;
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

// Self time per node: each sample's delta goes to the node sampled.
const selfUs = new Map<number, number>();
for (let k = 0; k < profile.samples.length; k++) selfUs.set(profile.samples[k]!, (selfUs.get(profile.samples[k]!) ?? 0) + (profile.timeDeltas[k] ?? 0));
const total = profile.endTime - profile.startTime;
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
const short = (url: string) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, 'node_modules/')
    .replace(/^.*\/(server|dist)\//, '$1/') || '(native)';
for (const node of profile.nodes) {
  const us = selfUs.get(node.id) ?? 0;
  if (!us) continue;
  const f = node.callFrame;
  const where = short(f.url);
  const key = `${f.functionName || '(anonymous)'}  ${where}${f.url ? `:${f.lineNumber + 1}` : ''}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  const fileKey = f.url ? where.replace(/^(node_modules\/(?:@[^/]+\/)?[^/]+)\/.*$/, '$1') : f.functionName || '(native)';
  byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + us);
}
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${(us / 1000).toFixed(0).padStart(8)} ms ${((us / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
};
console.log(`profile: ${(total / 1e6).toFixed(1)} s wall`);
print('self time by function', byFunction);
print('self time by file or package', byFile);
