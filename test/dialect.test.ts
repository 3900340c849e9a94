/**
 * The one place SQLite and PostgreSQL differ (issue 25, platform/db/dialect.ts): the
 * migrations' DDL as PostgreSQL reads it, hand-written texts' placeholders, the JSON helpers.
 * The translations run for real in `npm run test:postgres` (every migration, every query);
 * these pin the edges a regular expression could get wrong.
 */
import t from 'tap';
import { sqlText, translateDdl } from '../server/src/platform/db/dialect.js';
import { numberedPlaceholders } from '../server/src/platform/db/prepared.js';

t.test('translateDdl: types and table options change, string literals never', async (t) => {
  const ddl = `create table t (
    id text primary key,
    n integer not null default 0,
    r real,
    b blob,
    kind text not null check (kind in ('text', 'integer', 'real blob')),
    name text not null collate nocase,
    check ((a is not null) + (b is not null) = 1)
  ) strict, without rowid`;
  const out = translateDdl(ddl, true);
  t.match(out, /id text collate "C" primary key/);
  t.match(out, /n bigint not null default 0/);
  t.match(out, /r double precision,/);
  t.match(out, /b bytea,/);
  t.match(out, /check \(kind in \('text', 'integer', 'real blob'\)\)/, 'literals untouched');
  t.match(out, /kind text collate "C" not null/);
  t.match(out, /name text not null collate nocase/, 'a column with its own collation keeps it');
  t.match(out, /check \(\(a is not null\)::int \+ \(b is not null\)::int = 1\)/, 'a sum of conditions counts them');
  t.match(out, /\)\s*$/, 'no table options left');
  t.notMatch(out, /strict|rowid/);
  t.equal(
    translateDdl(`create index i on t(name collate nocase) where kind = 'text'`, false),
    `create index i on t(name collate nocase) where kind = 'text'`,
    'an index: nothing to do',
  );
  t.equal(translateDdl(`it''s 'a '' text' text`, true), `it''s 'a '' text' text collate "C"`, 'doubled quotes stay inside their literal');
});

t.test('numberedPlaceholders: ? outside literals and quoted names become $1, $2...', async (t) => {
  t.equal(numberedPlaceholders('select a from t where b = ? and c in (?, ?)'), 'select a from t where b = $1 and c in ($2, $3)');
  t.equal(numberedPlaceholders(`select '?' as q, "w?" from t where x = ?`), `select '?' as q, "w?" from t where x = $1`);
  t.equal(numberedPlaceholders('select $1'), 'select $1', 'a text already numbered stays');
});

t.test('sqlText: the same question in each dialect', async (t) => {
  t.equal(sqlText.jsonValue('sqlite', 'doc', '$.a.b'), `json_extract(doc, '$.a.b')`);
  t.equal(sqlText.jsonValue('postgres', 'doc', '$.a.b'), `(doc::jsonb #>> '{a,b}')`);
  t.match(sqlText.jsonNumber('postgres', 's.last_status', '$.display.width'), /jsonb_typeof\(s\.last_status::jsonb #> '\{display,width\}'\) = 'number'/);
  t.equal(sqlText.jsonArrayAgg('postgres', 'm.id', 'm.id'), `coalesce(json_agg(m.id order by m.id)::text, '[]')`);
  t.equal(sqlText.jsonArrayAgg('sqlite', 'm.id'), 'json_group_array(m.id)');
  t.match(
    sqlText.jsonArrayItems('postgres', 'x.tags', null, 't', true),
    /^jsonb_array_elements_text\(case when jsonb_typeof\(x\.tags::jsonb\) = 'array' then .* else '\[\]'::jsonb end\) t\(value\)$/,
  );
  t.equal(sqlText.jsonArrayItems('sqlite', 'c.snapshot', '$.items', 'i'), `json_each(c.snapshot, '$.items') i`);
  t.throws(
    () => sqlText.jsonValue('postgres', 'doc', "$.a'; drop table t; --"),
    /unsupported JSON path/,
    'a path is a constant of the code: anything else is refused',
  );
  t.throws(() => sqlText.jsonValue('postgres', 'doc', '$.items[0]'), /unsupported JSON path/);
});
