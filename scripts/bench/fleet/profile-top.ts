/**
 * The functions with the most self time in a V8 CPU profile (node --cpu-prof), and the
 * same summed by file: a first look at where the server's time went in a fleet run.
 *   npx tsx scripts/bench/fleet/profile-top.ts <file.cpuprofile> [--top 25]
 *     [--window FROM,TO]   only the samples from FROM to TO seconds after the profile began
 *     [--mark NAME]        the seconds (after the profile began) in which a stack holds NAME
 *     [--inclusive A,B,..] time of the samples whose stack holds A (B, ...): each one's total
 * E.g. the refetch after a fleet run's change: --mark contentChanged finds the change, then
 * --window around it with --inclusive currentManifest,sharedEntry,hasOwnInputs,...
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  children?: number[];
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
const opt = (name: string) => {
  const k = process.argv.indexOf(`--${name}`);
  return k > 0 ? process.argv[k + 1] : undefined;
};
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const window = opt('window')
  ?.split(',')
  .map((x) => Number(x) * 1e6);

// Each node's parent, to walk a sample's stack.
const parent = new Map<number, number>();
const nodeById = new Map<number, ProfileNode>();
for (const node of profile.nodes) {
  nodeById.set(node.id, node);
  for (const c of node.children ?? []) parent.set(c, node.id);
}
const stackHas = (id: number, name: string) => {
  for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) if (nodeById.get(n)!.callFrame.functionName === name) return true;
  return false;
};

// Self time per node: each sample's delta goes to the node sampled (within the window).
const selfUs = new Map<number, number>();
const inclusive = (opt('inclusive')?.split(',') ?? []).map((name) => ({ name, us: 0 }));
const mark = opt('mark');
const marked = new Map<number, number>();
let at = 0;
let total = 0;
for (let k = 0; k < profile.samples.length; k++) {
  const dt = profile.timeDeltas[k] ?? 0;
  at += dt;
  const id = profile.samples[k]!;
  if (mark && stackHas(id, mark)) marked.set(Math.floor(at / 1e6), (marked.get(Math.floor(at / 1e6)) ?? 0) + dt);
  if (window && (at < window[0]! || at > window[1]!)) continue;
  total += dt;
  selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
  for (const inc of inclusive) if (stackHas(id, inc.name)) inc.us += dt;
}
if (mark) console.log(`seconds with ${mark} on the stack (ms of samples): ${[...marked].map(([s, us]) => `${s}s:${(us / 1000).toFixed(0)}`).join(' ')}`);
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
console.log(`profile: ${(total / 1e6).toFixed(1)} s wall${window ? ` (of ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s)` : ''}`);
if (inclusive.length) {
  console.log('\ninclusive time (samples with the function on the stack)');
  for (const inc of inclusive) console.log(`${(inc.us / 1000).toFixed(0).padStart(8)} ms ${((inc.us / total) * 100).toFixed(1).padStart(5)}%  ${inc.name}`);
}
print('self time by function', byFunction);
print('self time by file or package', byFile);
