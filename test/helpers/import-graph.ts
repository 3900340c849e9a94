import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** file -> the files it imports (relative imports that resolve to a .ts file of the tree), type-only ones included. */
export type ImportGraph = Map<string, string[]>;

/** The import graph of every .ts file under `root` (paths relative to `root`, with '/' separators). */
export function importGraph(root: string): ImportGraph {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) files.push(p);
    }
  };
  walk(root);
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    const out = new Set<string>();
    for (const ref of info.importedFiles) {
      if (!ref.fileName.startsWith('.')) continue;
      const target = path.resolve(path.dirname(file), ref.fileName).replace(/\.js$/, '.ts');
      if (fs.existsSync(target)) out.add(path.relative(root, target).split(path.sep).join('/'));
    }
    graph.set(path.relative(root, file).split(path.sep).join('/'), [...out].sort());
  }
  return graph;
}

/** Every import circle (strongly connected set of two or more files, or a file importing itself), each sorted. */
export function importCircles(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const members: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        members.push(w);
      } while (w !== v);
      if (members.length > 1 || (graph.get(v) ?? []).includes(v)) circles.push(members.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return circles;
}

/** The module area of a file (`modules/<area>/...`), or null outside modules/. */
export function areaOf(file: string): string | null {
  const m = /^modules\/([^/]+)\//.exec(file);
  return m ? m[1]! : null;
}

/**
 * The module contract's import rules (docs/architecture.md, "Modules"), as messages:
 * - a module uses another only through its index.ts;
 * - platform/ depends on no module and on nothing above it (config.ts and version.ts are leaves);
 * - modules do not import the composition root (app.ts, routes.ts, main.ts, cli.ts, authenticators.ts).
 */
export function contractViolations(graph: ImportGraph): string[] {
  const out: string[] = [];
  const top = new Set(['app.ts', 'routes.ts', 'main.ts', 'cli.ts', 'authenticators.ts', 'server.ts']);
  for (const [file, imports] of graph) {
    const area = areaOf(file);
    for (const target of imports) {
      const targetArea = areaOf(target);
      if (area && targetArea && targetArea !== area && target !== `modules/${targetArea}/index.ts`) {
        out.push(`${file} imports ${target}: another module's internals (import modules/${targetArea}/index.ts)`);
      }
      if (file.startsWith('platform/') && !target.startsWith('platform/') && target !== 'config.ts' && target !== 'version.ts') {
        out.push(`${file} imports ${target}: platform/ depends on no module and nothing above it`);
      }
      if ((area || file === 'modules/index.ts') && top.has(target)) out.push(`${file} imports ${target}: a module never imports the composition root`);
    }
  }
  return out.sort();
}

/** Module-level dependencies: area -> the other areas its files import. */
export function areaDependencies(graph: ImportGraph): Map<string, Set<string>> {
  const deps = new Map<string, Set<string>>();
  for (const [file, imports] of graph) {
    const area = areaOf(file);
    if (!area) continue;
    const set = deps.get(area) ?? new Set<string>();
    deps.set(area, set);
    for (const t of imports) {
      const ta = areaOf(t);
      if (ta && ta !== area) set.add(ta);
    }
  }
  return deps;
}
