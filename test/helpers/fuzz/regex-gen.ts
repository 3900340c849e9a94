import type { Rng } from './rng.js';

/**
 * Makes a string matching a JSON Schema `pattern`: the subset of regular expressions the
 * document uses (literals, escapes, \d \w \s, classes with ranges, groups, alternation,
 * ?, *, +, {n}, {n,m}, anchors). Answers null for anything else; the caller falls back.
 */
export function stringFromPattern(pattern: string, rng: Rng): string | null {
  try {
    const p = new Parser(pattern);
    const node = p.alternation();
    if (p.i < pattern.length) return null;
    const out = render(node, rng);
    return new RegExp(pattern).test(out) ? out : null;
  } catch {
    return null;
  }
}

type Node =
  | { t: 'alt'; options: Node[][] }
  | { t: 'set'; chars: string[] }
  | { t: 'lit'; c: string }
  | { t: 'rep'; node: Node; min: number; max: number }
  | { t: 'empty' };

const DIGITS = '0123456789'.split('');
const WORD = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'.split('');
const SPACE = [' '];
const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i));

class Parser {
  i = 0;
  constructor(private readonly s: string) {}

  private peek() {
    return this.s[this.i];
  }

  alternation(): Node {
    const options: Node[][] = [[]];
    while (this.i < this.s.length && this.peek() !== ')') {
      if (this.peek() === '|') {
        this.i++;
        options.push([]);
        continue;
      }
      const atom = this.atom();
      options[options.length - 1]!.push(this.quantified(atom));
    }
    return { t: 'alt', options };
  }

  private quantified(node: Node): Node {
    const c = this.peek();
    if (c === '?') return (this.i++, { t: 'rep', node, min: 0, max: 1 });
    if (c === '*') return (this.i++, { t: 'rep', node, min: 0, max: 3 });
    if (c === '+') return (this.i++, { t: 'rep', node, min: 1, max: 3 });
    if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.i));
      if (!m) throw new Error('quantifier');
      this.i += m[0].length;
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] ? Number(m[3]) : min + 3;
      return { t: 'rep', node, min, max };
    }
    return node;
  }

  private escape(): string[] {
    const c = this.s[this.i++];
    if (c === 'd') return DIGITS;
    if (c === 'w') return WORD;
    if (c === 's') return SPACE;
    if (c === undefined || /[DWSbB]/.test(c)) throw new Error('escape');
    return [c];
  }

  private atom(): Node {
    const c = this.s[this.i++]!;
    if (c === '^' || c === '$') return { t: 'empty' };
    if (c === '(') {
      if (this.s.startsWith('?:', this.i)) this.i += 2;
      else if (this.peek() === '?') throw new Error('lookaround');
      const inner = this.alternation();
      if (this.s[this.i++] !== ')') throw new Error('group');
      return inner;
    }
    if (c === '[') return this.set();
    if (c === '.') return { t: 'set', chars: PRINTABLE };
    if (c === '\\') return { t: 'set', chars: this.escape() };
    return { t: 'lit', c };
  }

  private set(): Node {
    let negate = false;
    if (this.peek() === '^') {
      negate = true;
      this.i++;
    }
    const chars: string[] = [];
    let first = true;
    while (this.i < this.s.length && (this.peek() !== ']' || first)) {
      first = false;
      let c = this.s[this.i++]!;
      let group: string[] = [c];
      if (c === '\\') group = this.escape();
      c = group.length === 1 ? group[0]! : '';
      if (c && this.peek() === '-' && this.s[this.i + 1] !== ']' && this.s[this.i + 1] !== undefined) {
        this.i++;
        let end = this.s[this.i++]!;
        if (end === '\\') end = this.escape()[0]!;
        for (let k = c.charCodeAt(0); k <= end.charCodeAt(0); k++) chars.push(String.fromCharCode(k));
      } else {
        chars.push(...group);
      }
    }
    if (this.s[this.i++] !== ']') throw new Error('set');
    return { t: 'set', chars: negate ? PRINTABLE.filter((p) => !chars.includes(p)) : chars };
  }
}

function render(node: Node, rng: Rng): string {
  switch (node.t) {
    case 'empty':
      return '';
    case 'lit':
      return node.c;
    case 'set':
      return rng.pick(node.chars);
    case 'rep': {
      let out = '';
      const n = rng.int(node.min, node.max);
      for (let i = 0; i < n; i++) out += render(node.node, rng);
      return out;
    }
    case 'alt':
      return rng
        .pick(node.options)
        .map((n) => render(n, rng))
        .join('');
  }
}
