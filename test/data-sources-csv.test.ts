import fs from 'node:fs';
import t from 'tap';
import { type CsvConfig, csvConfigSchema, detectDelimiter, parseCsv, uniqueNames } from '../server/src/modules/data-sources/providers/csv.js';

/** The csv provider's parse (issue 17): delimiter, encoding and type detection on sheets shaped like real exports. */

const fixture = (name: string) => fs.readFileSync(new URL(`./fixtures/data-sources/${name}`, import.meta.url));
const defaults = csvConfigSchema.parse({ url: 'https://sheet.example/export.csv' });
const ctx = { timeZone: 'Europe/Berlin' };
const parse = (body: Buffer | string, config: Partial<CsvConfig> = {}, contentType: string | null = 'text/csv') =>
  parseCsv(typeof body === 'string' ? Buffer.from(body) : body, contentType, { ...defaults, ...config }, ctx);

t.test('a European sheet: UTF-8 BOM, semicolons, decimal commas, ja/nein, dd.mm.yyyy, odd header, ragged row', async (t) => {
  const d = parse(fixture('menu-semicolon.csv'));
  t.same(d.columns, [
    { name: 'Artikel', type: 'text' },
    { name: 'Kategorie', type: 'text' },
    { name: 'Preis', type: 'number' },
    { name: 'Preis groß', type: 'number' },
    { name: 'Vegan', type: 'boolean' },
    { name: 'Verfügbar ab', type: 'date' },
    { name: 'Bild', type: 'image' },
    { name: 'column8', type: 'text' },
    { name: 'Artikel_2', type: 'text' },
  ]);
  t.equal(d.columns[0]!.name, 'Artikel', 'the BOM is not part of the first name');
  t.equal(d.rows.length, 5, 'the blank line is no row');
  t.same(d.rows[0], {
    Artikel: 'Espresso',
    Kategorie: 'Kaffee',
    Preis: 2.4,
    'Preis groß': 3.1,
    Vegan: true,
    'Verfügbar ab': '2024-03-01',
    Bild: 'https://cafe.example.de/img/espresso.jpg',
    column8: null,
    Artikel_2: 'E1',
  });
  t.equal(d.rows[1]!.Artikel, 'Cappuccino; mit Hafermilch', 'a quoted value keeps its semicolon');
  t.equal(d.rows[3]!.Preis, 1012.5, '1.012,50: thousands dot, decimal comma');
  t.same(d.rows[4], {
    Artikel: 'Tee',
    Kategorie: 'Heißgetränke',
    Preis: 2.1,
    'Preis groß': null,
    Vegan: null,
    'Verfügbar ab': null,
    Bild: null,
    column8: null,
    Artikel_2: null,
  });
  t.match(d.warnings, [/2 header name\(s\) were empty or repeated/, /1 row\(s\) had fewer values than the 9 columns/]);
  t.notMatch(d.warnings.join(' '), /encoding/, 'a BOM is no guess');
});

t.test('a Windows-1252 export: the encoding is guessed and said, and € and – survive', async (t) => {
  const d = parse(fixture('prices-1252.csv'));
  t.same(
    d.rows.map((r) => r.Product),
    ['Crème brûlée', 'Café au lait – grand', 'Früchte-Müsli (€ 1 Pfand)'],
  );
  t.match(d.warnings, [/not valid UTF-8; it was read as Windows-1252/]);
  t.same(d.columns, [
    { name: 'Product', type: 'text' },
    { name: 'Price EUR', type: 'number' },
    { name: 'In stock', type: 'boolean' },
    { name: 'Updated', type: 'datetime' },
  ]);
  t.same(d.rows[0], { Product: 'Crème brûlée', 'Price EUR': 4.5, 'In stock': true, Updated: '2024-03-05T14:30:00+01:00' }, 'wall clock in the source zone');
  const told = parse(fixture('prices-1252.csv'), { encoding: 'windows-1252' });
  t.equal(told.rows[1]!.Product, 'Café au lait – grand');
  t.same(told.warnings, [], 'an encoding set in the config is no guess');
  const charset = parse(fixture('prices-1252.csv'), {}, 'text/csv; charset=ISO-8859-1');
  t.equal(charset.rows[2]!.Product, 'Früchte-Müsli (€ 1 Pfand)', 'a Latin-1 charset is read as Windows-1252, as browsers do');
  t.same(charset.warnings, []);
});

t.test('UTF-16 with a BOM (Excel "Unicode text"), both byte orders', async (t) => {
  const text = 'Name\tPreis\r\nMüsli\t3,5\r\nSaft\t2\r\n';
  const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
  const be = Buffer.from(le);
  be.swap16();
  for (const [name, body] of [
    ['LE', le],
    ['BE', be],
  ] as const) {
    const d = parse(body);
    t.same(
      d.rows,
      [
        { Name: 'Müsli', Preis: '3,5' },
        { Name: 'Saft', Preis: '2' },
      ],
      `${name} parses`,
    );
    t.equal(d.rows[0]!.Name, 'Müsli', `${name}: text decoded`);
    t.equal(d.columns[1]!.type, 'text', `${name}: with tabs, 3,5 is no number (the decimal mark is '.' unless the delimiter is ';')`);
    t.same(d.warnings, []);
  }
  const d = parse(le, { decimalSeparator: ',' });
  t.same(
    d.rows.map((r) => r.Preis),
    [3.5, 2],
    'unless the config says the decimal mark is a comma',
  );
});

t.test('delimiters: detected (comma, semicolon, tab, pipe) or given', async (t) => {
  t.equal(detectDelimiter('a,b,c\n1,2,3\n'), ',');
  t.equal(detectDelimiter('a;b;c\n1;2;3\n'), ';');
  t.equal(detectDelimiter('a\tb\n1\t2\n'), '\t');
  t.equal(detectDelimiter('a|b\n1|2\n'), '|');
  t.equal(detectDelimiter('Espresso;2,50\nKuchen;4,00\n'), ';', 'no header, decimal commas: as many commas as semicolons, the semicolon wins');
  t.equal(detectDelimiter('name,note\n"Tea; green",1.5\nCoffee,2\n'), ',', 'a semicolon inside quotes does not count');
  t.equal(detectDelimiter('Artikel;Preis\nA;1,5\nB;2,5\nC;3\n'), ';', 'a row without a comma does not tip it to the comma');
  t.equal(detectDelimiter('single\nvalue\n'), ',', 'one column: the comma');
  const given = parse('a;b,c\n1;2,3\n', { delimiter: ',' });
  t.same(
    given.columns.map((c) => c.name),
    ['a;b', 'c'],
    'a given delimiter is used as given',
  );
});

t.test('numbers, booleans and dates are only typed when every value fits', async (t) => {
  const d = parse(
    'id,zip,price,ratio,flag,when,day,us,link\n' +
      '1,01234,"1,234.50",-0.5,yes,2024-03-05T10:00:00Z,13/02/2024,02/13/2024,https://x.example/a\n' +
      '2,10115,2,1e3,No,2024-03-31 02:30,01/03/2024,03/01/2024,https://x.example/b.png\n' +
      '3,80331,,.25,,2024-04-01T12:00:00+02:00,,,\n',
  );
  t.same(
    d.columns.map((c) => `${c.name}:${c.type}`),
    ['id:number', 'zip:text', 'price:number', 'ratio:number', 'flag:boolean', 'when:datetime', 'day:date', 'us:date', 'link:url'],
  );
  t.same(d.rows[0], {
    id: 1,
    zip: '01234',
    price: 1234.5,
    ratio: -0.5,
    flag: true,
    when: '2024-03-05T10:00:00Z',
    day: '2024-02-13',
    us: '2024-02-13',
    link: 'https://x.example/a',
  });
  t.equal(d.rows[1]!.when, '2024-03-31T03:30:00+02:00', 'a wall time inside the spring-forward gap moves forward, it is not lost');
  t.equal(d.rows[1]!.day, '2024-03-01', 'day-first, since 13/02 says so');
  t.equal(d.rows[1]!.us, '2024-03-01', 'month-first, since 02/13 says so');
  t.equal(d.rows[2]!.ratio, 0.25);
  t.same(d.warnings, [], 'nothing ambiguous');
  const ambiguous = parse('day\n01/02/2024\n03/04/2024\n');
  t.same(ambiguous.rows, [{ day: '2024-01-02' }, { day: '2024-03-04' }], 'with commas: month-first');
  t.match(ambiguous.warnings, [/could be day-first or month-first; they were read as month\/day\/year/]);
  const mixed = parse('v\n1\ntwo\n');
  t.same(mixed.rows, [{ v: '1' }, { v: 'two' }], 'one value that is no number keeps the column text');
  const german = parse('Zeit;Menge\n05.03.2024 14:30;1.000\n06.03.2024 09:05;2,5\n');
  t.same(german.rows, [
    { Zeit: '2024-03-05T14:30:00+01:00', Menge: 1000 },
    { Zeit: '2024-03-06T09:05:00+01:00', Menge: 2.5 },
  ]);
});

t.test('without a header: col1..colN, as wide as the widest row', async (t) => {
  const d = parse('a,1\nb,2,extra\n', { hasHeader: false });
  t.same(
    d.columns.map((c) => c.name),
    ['col1', 'col2', 'col3'],
  );
  t.same(d.rows[0], { col1: 'a', col2: 1, col3: null });
  t.match(d.warnings, [/1 row\(s\) had fewer values/]);
  const wide = parse('a,b\n1,2,3\n');
  t.same(wide.rows, [{ a: 1, b: 2 }]);
  t.match(wide.warnings, [/1 row\(s\) had more values than the 2 columns; the extra values were left out/]);
});

t.test('maxRows cuts with a warning; the cap is 100,000', async (t) => {
  const body = `n\n${Array.from({ length: 25 }, (_, i) => i).join('\n')}\n`;
  const d = parse(body, { maxRows: 10 });
  t.equal(d.rows.length, 10);
  t.equal(d.rows[9]!.n, 9);
  t.match(d.warnings, [/has 25 rows; only the first 10 are used/]);
  t.same(parse(body).warnings, [], 'under the limit: no warning');
  t.notOk(csvConfigSchema.safeParse({ url: 'https://x.example/a.csv', maxRows: 100_001 }).success);
  t.notOk(csvConfigSchema.safeParse({ url: 'https://x.example/a.csv', maxRows: 0 }).success);
  t.ok(csvConfigSchema.safeParse({ url: 'https://x.example/a.csv', maxRows: 100_000 }).success);
});

t.test('unique names', async (t) => {
  t.same(uniqueNames(['a', 'a', '', ' a ', 'a_2', '']), ['a', 'a_2', 'column3', 'a_3', 'a_2_2', 'column6']);
});

t.test('bad input', async (t) => {
  t.throws(() => parse(''), { message: 'the document is empty' });
  t.throws(() => parse('\r\n\r\n'), { message: 'the document is empty' });
  t.throws(() => parse('<!DOCTYPE html><html><body>Sign in</body></html>'), { message: /an HTML page, not CSV/ });
  const headerOnly = parse('a;b;c\n');
  t.same(headerOnly.rows, []);
  t.same(
    headerOnly.columns.map((c) => c.type),
    ['text', 'text', 'text'],
  );
  const unclosed = parse('a,b\n"x,1\n2,3\n');
  t.match(unclosed.warnings.join(' '), /quoted value is not closed/);
  t.notOk(csvConfigSchema.safeParse({ url: 'https://x.example/a.csv', delimiter: ':' }).success, 'unknown delimiter');
  t.notOk(csvConfigSchema.safeParse({ url: 'https://x.example/a.csv', encoding: 'ebcdic' }).success, 'unknown encoding');
  t.notOk(csvConfigSchema.safeParse({ url: 'https://x.example/a.csv', hasHeader: 'yes' }).success, 'hasHeader is a boolean');
  t.same(
    { hasHeader: defaults.hasHeader, delimiter: defaults.delimiter, encoding: defaults.encoding, maxRows: defaults.maxRows },
    { hasHeader: true, delimiter: 'auto', encoding: 'auto', maxRows: 10_000 },
    'defaults',
  );
});
