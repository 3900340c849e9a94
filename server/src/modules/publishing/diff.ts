import type { Comparable } from '../../platform/publications.js';

/**
 * Compare (docs/publishing.md "History"): the difference between two `Comparable`s, the
 * reduced snapshots every content type answers. Pure: no database, no clock.
 */
export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}
export interface ItemRef {
  key: string;
  label: string;
}
export interface Difference {
  identical: boolean;
  fields: FieldChange[];
  items: {
    added: ItemRef[];
    removed: ItemRef[];
    moved: (ItemRef & { fromIndex: number; toIndex: number })[];
    changed: (ItemRef & { fields: FieldChange[] })[];
  };
}

/** JSON with object keys sorted, so that equal values compare equal whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

const same = (a: unknown, b: unknown) => canonical(a ?? null) === canonical(b ?? null);

/** Fields of `from` and `to` (in their first-seen order) whose values differ; a missing field reads as null. */
export function fieldChanges(from: Record<string, unknown>, to: Record<string, unknown>): FieldChange[] {
  const names = [...new Set([...Object.keys(from), ...Object.keys(to)])];
  return names.filter((f) => !same(from[f], to[f])).map((field) => ({ field, from: from[field] ?? null, to: to[field] ?? null }));
}

/** The keys of the longest common subsequence of two key lists (what kept its relative order). */
function keptInOrder(a: readonly string[], b: readonly string[]): Set<string> {
  const n = a.length;
  const m = b.length;
  const len: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) len[i]![j] = a[i] === b[j] ? len[i + 1]![j + 1]! + 1 : Math.max(len[i + 1]![j]!, len[i]![j + 1]!);
  const kept = new Set<string>();
  for (let i = 0, j = 0; i < n && j < m; ) {
    if (a[i] === b[j]) {
      kept.add(a[i]!);
      i++;
      j++;
    } else if (len[i + 1]![j]! >= len[i]![j + 1]!) i++;
    else j++;
  }
  return kept;
}

/**
 * What changed from `from` to `to`: top-level fields; items by key: added, removed, moved
 * (the fewest items whose relative order changed: those outside the longest run kept in
 * order, so one item moved to the front is one move, not every item shifting) and changed
 * (by field). Indexes are positions in each side's item list. Labels are `to`'s, else `from`'s.
 */
export function compareComparables(from: Comparable, to: Comparable): Difference {
  const fields = fieldChanges(from.fields, to.fields);
  const fromByKey = new Map(from.items.map((it, i) => [it.key, { it, i }]));
  const toByKey = new Map(to.items.map((it, i) => [it.key, { it, i }]));
  const added = to.items.filter((it) => !fromByKey.has(it.key)).map(({ key, label }) => ({ key, label }));
  const removed = from.items.filter((it) => !toByKey.has(it.key)).map(({ key, label }) => ({ key, label }));
  const commonFrom = from.items.filter((it) => toByKey.has(it.key)).map((it) => it.key);
  const commonTo = to.items.filter((it) => fromByKey.has(it.key)).map((it) => it.key);
  const kept = keptInOrder(commonFrom, commonTo);
  const moved = commonTo
    .filter((k) => !kept.has(k))
    .map((key) => ({ key, label: toByKey.get(key)!.it.label, fromIndex: fromByKey.get(key)!.i, toIndex: toByKey.get(key)!.i }));
  const changed = commonTo
    .map((key) => ({ key, label: toByKey.get(key)!.it.label, fields: fieldChanges(fromByKey.get(key)!.it.fields, toByKey.get(key)!.it.fields) }))
    .filter((c) => c.fields.length > 0);
  const identical = !fields.length && !added.length && !removed.length && !moved.length && !changed.length;
  return { identical, fields, items: { added, removed, moved, changed } };
}
