import t from 'tap';
import { compareComparables } from '../server/src/modules/publishing/diff.js';

const item = (key: string, fields: Record<string, unknown> = {}) => ({ key, label: key.toUpperCase(), fields });

t.test('identical sides, whatever the key order of objects', async (t) => {
  const a = { fields: { size: { w: 1, h: 2 }, bg: '#000' }, items: [item('a', { x: 1 }), item('b')] };
  const b = { fields: { bg: '#000', size: { h: 2, w: 1 } }, items: [item('a', { x: 1 }), item('b')] };
  t.same(compareComparables(a, b), { identical: true, fields: [], items: { added: [], removed: [], moved: [], changed: [] } });
});

t.test('fields changed, a missing field reads as null', async (t) => {
  const d = compareComparables({ fields: { bg: '#000', w: 10 }, items: [] }, { fields: { bg: '#fff', extra: true, w: 10 }, items: [] });
  t.equal(d.identical, false);
  t.same(d.fields, [
    { field: 'bg', from: '#000', to: '#fff' },
    { field: 'extra', from: null, to: true },
  ]);
});

t.test('items added, removed, changed by field', async (t) => {
  const d = compareComparables(
    { fields: {}, items: [item('a', { x: 1, y: 2 }), item('b'), item('c')] },
    { fields: {}, items: [item('a', { x: 5, y: 2 }), item('c'), item('d')] },
  );
  t.same(d.items.added, [{ key: 'd', label: 'D' }]);
  t.same(d.items.removed, [{ key: 'b', label: 'B' }]);
  t.same(d.items.moved, [], 'c moved up because b left: not a move');
  t.same(d.items.changed, [{ key: 'a', label: 'A', fields: [{ field: 'x', from: 1, to: 5 }] }]);
});

t.test('one item moved to the front is one move, with both indexes', async (t) => {
  const d = compareComparables(
    { fields: {}, items: ['a', 'b', 'c', 'd'].map((k) => item(k)) },
    { fields: {}, items: ['d', 'a', 'b', 'c'].map((k) => item(k)) },
  );
  t.same(d.items.moved, [{ key: 'd', label: 'D', fromIndex: 3, toIndex: 0 }]);
  t.same(d.items.changed, []);
  t.equal(d.identical, false);
});

t.test('a swap moves one of the two; a reversal all but one', async (t) => {
  const swap = compareComparables({ fields: {}, items: [item('a'), item('b')] }, { fields: {}, items: [item('b'), item('a')] });
  t.equal(swap.items.moved.length, 1);
  const rev = compareComparables(
    { fields: {}, items: ['a', 'b', 'c', 'd'].map((k) => item(k)) },
    { fields: {}, items: ['d', 'c', 'b', 'a'].map((k) => item(k)) },
  );
  t.equal(rev.items.moved.length, 3);
});

t.test('empty sides and everything replaced', async (t) => {
  t.equal(compareComparables({ fields: {}, items: [] }, { fields: {}, items: [] }).identical, true);
  const d = compareComparables({ fields: {}, items: [item('a')] }, { fields: {}, items: [item('b')] });
  t.same(d.items, { added: [{ key: 'b', label: 'B' }], removed: [{ key: 'a', label: 'A' }], moved: [], changed: [] });
});
