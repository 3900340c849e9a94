import fs from 'node:fs';
import t from 'tap';
import { ICAL_COLUMNS, icalConfigSchema, parseIcal } from '../server/src/modules/data-sources/providers/ical.js';

/**
 * The ical provider's parse (issue 17): a calendar shaped like a Google Calendar export,
 * expanded over a window in the source's zone. "Now" is Monday 18 March 2024, 10:00 in
 * Berlin; Europe changes to summer time on 31 March, the United States did on 10 March.
 */

const fixture = (name: string) => fs.readFileSync(new URL(`./fixtures/data-sources/${name}`, import.meta.url));
const NOW = new Date('2024-03-18T09:00:00Z');
const defaults = icalConfigSchema.parse({ url: 'https://calendar.example.com/ical/basic.ics' });
const parse = (body: Buffer | string, config: Partial<typeof defaults> = {}, timeZone = 'Europe/Berlin', now = NOW) =>
  parseIcal(
    typeof body === 'string' ? Buffer.from(body) : body,
    'text/calendar',
    { ...defaults, ...config },
    { timeZone, now },
    'https://calendar.example.com/ical/basic.ics',
  );
const calendar = (...events: string[]) => `BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n${events.join('')}END:VCALENDAR\r\n`;
const event = (lines: string) => `BEGIN:VEVENT\r\n${lines.trim().split('\n').join('\r\n')}\r\nEND:VEVENT\r\n`;

t.test('a studio calendar over the next 30 days', async (t) => {
  const d = parse(fixture('studio.ics'));
  t.same(d.columns, ICAL_COLUMNS);
  t.same(d.warnings, []);
  t.same(
    d.rows.map((r) => `${r.start} ${r.title}`),
    [
      '2024-03-18T14:00:00+01:00 Call with the New York office',
      '2024-03-19T07:00:00+01:00 Early spin',
      '2024-03-20T10:00:00+01:00 Open day',
      '2024-03-20T19:30:00+01:00 Choir rehearsal',
      '2024-03-21T18:00:00+01:00 Yoga for beginners',
      '2024-03-23T09:00:00+01:00 Pop-up market',
      '2024-03-25T14:00:00+01:00 Call with the New York office',
      '2024-03-27T19:30:00+01:00 Choir rehearsal',
      '2024-03-29 Easter holidays – studio closed',
      '2024-04-02T08:00:00+02:00 Early spin',
      '2024-04-03T19:30:00+02:00 Choir rehearsal',
      '2024-04-05T10:00:00+02:00 Yoga for beginners (Friday morning this week)',
      '2024-04-06T09:00:00+02:00 Pop-up market',
      '2024-04-09T08:00:00+02:00 Early spin',
      '2024-04-10T19:30:00+02:00 Choir rehearsal',
      '2024-04-11T18:00:00+02:00 Yoga for beginners',
      '2024-04-13T09:00:00+02:00 Pop-up market',
      '2024-04-16T08:00:00+02:00 Early spin',
      '2024-04-17T19:30:00+02:00 Choir rehearsal',
    ],
    'every instance in order; the 28 March yoga (EXDATE) and the 26 March spin (cancelled) are gone',
  );
  const yoga = d.rows.filter((r) => r.uid === '5k1t0v2h3q@google.com');
  t.same(
    yoga.map((r) => [r.start, r.end]),
    [
      ['2024-03-21T18:00:00+01:00', '2024-03-21T19:30:00+01:00'],
      ['2024-04-05T10:00:00+02:00', '2024-04-05T11:30:00+02:00'],
      ['2024-04-11T18:00:00+02:00', '2024-04-11T19:30:00+02:00'],
    ],
    'the weekly 18:00 stays 18:00 across the change to summer time; the moved instance keeps its own times',
  );
  t.same(yoga[0], {
    title: 'Yoga for beginners',
    description: 'Bring a mat and water.\n\nBeginners welcome, no booking needed.',
    location: 'Studio 2, Riverside Hall',
    start: '2024-03-21T18:00:00+01:00',
    end: '2024-03-21T19:30:00+01:00',
    allDay: false,
    url: null,
    uid: '5k1t0v2h3q@google.com',
    categories: 'Yoga, Beginners',
  });
  t.equal(yoga[1]!.location, 'Studio 1, Riverside Hall', 'the override’s own fields');
  t.equal(yoga[1]!.description, yoga[0]!.description, 'and the series’ where it has none');
  const spin = d.rows.filter((r) => r.title === 'Early spin').map((r) => r.start);
  t.same(spin.slice(0, 2), ['2024-03-19T07:00:00+01:00', '2024-04-02T08:00:00+02:00'], 'a UTC series moves on the wall clock instead');
  const easter = d.rows.find((r) => r.allDay);
  t.same([easter?.start, easter?.end], ['2024-03-29', '2024-04-01'], 'all-day: dates, the end inclusive');
  const open = d.rows.find((r) => r.title === 'Open day');
  t.equal(open?.url, 'https://calendar.example.com/events/open-day', 'URL resolved against the calendar address');
  t.equal(open?.end, '2024-03-20T16:00:00+01:00', 'a floating time is read in the source zone');
  const market = d.rows.filter((r) => r.title === 'Pop-up market');
  t.same(
    market.map((r) => r.end),
    ['2024-03-23T14:00:00+01:00', '2024-04-06T14:00:00+02:00', '2024-04-13T14:00:00+02:00'],
    'RDATE instances, DURATION applied to each',
  );
});

t.test('a series that began years ago gives the same instances as one that began last week', async (t) => {
  const series = (start: string) =>
    calendar(
      event(`
UID:s
DTSTART;TZID=Europe/Berlin:${start}T193000
DTEND;TZID=Europe/Berlin:${start}T210000
RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=WE,FR
SUMMARY:s`),
    );
  // 2015-01-07 and 2024-03-06 are both Wednesdays an even number of weeks apart.
  const old = parse(series('20150107'), { daysAhead: 60 });
  const recent = parse(series('20240306'), { daysAhead: 60 });
  t.ok(old.rows.length >= 8);
  t.same(old.rows, recent.rows);
  const daily = (start: string) => calendar(event(`UID:d\nDTSTART:${start}T063000Z\nRRULE:FREQ=DAILY;INTERVAL=3\nSUMMARY:d`));
  // 2000-01-01 + 8844 days = 2024-03-19: a multiple of 3 days apart.
  t.same(parse(daily('20000101'), { daysAhead: 10 }).rows, parse(daily('20240319'), { daysAhead: 10 }).rows, 'and for an interval of days');
  const hourly = parse(calendar(event('UID:h\nDTSTART:20200101T000000Z\nRRULE:FREQ=HOURLY;INTERVAL=5\nSUMMARY:h')), { daysAhead: 0 });
  t.same(
    hourly.rows.map((r) => r.start),
    // 1538 days (36 912 hours) after the start; the next multiple of 5 hours is 03:00 UTC.
    ['2024-03-18T04:00:00+01:00', '2024-03-18T09:00:00+01:00', '2024-03-18T14:00:00+01:00', '2024-03-18T19:00:00+01:00'],
    'every five hours since 2020, today',
  );
});

t.test('RDATE periods keep their own length; dates on an all-day series', async (t) => {
  const d = parse(
    calendar(
      event(`
UID:talks
DTSTART:20240319T090000Z
DTEND:20240319T100000Z
RDATE;VALUE=PERIOD:20240322T150000Z/20240322T170000Z,20240326T150000Z/PT30M
SUMMARY:Talk`),
      event(`
UID:fair
DTSTART;VALUE=DATE:20240320
DTEND;VALUE=DATE:20240322
RDATE;VALUE=DATE:20240403
EXDATE;VALUE=DATE:20240320
SUMMARY:Fair`),
    ),
  );
  t.same(
    d.rows.map((r) => [r.title, r.start, r.end]),
    [
      ['Talk', '2024-03-19T10:00:00+01:00', '2024-03-19T11:00:00+01:00'],
      ['Talk', '2024-03-22T16:00:00+01:00', '2024-03-22T18:00:00+01:00'],
      ['Talk', '2024-03-26T16:00:00+01:00', '2024-03-26T16:30:00+01:00'],
      ['Fair', '2024-04-03', '2024-04-04'],
    ],
  );
});

t.test('the window: daysAhead, daysBehind, the source zone, maxOccurrences', async (t) => {
  const today = parse(fixture('studio.ics'), { daysAhead: 0 });
  t.same(
    today.rows.map((r) => r.title),
    ['Call with the New York office'],
    'daysAhead 0: today only',
  );
  const behind = parse(fixture('studio.ics'), { daysAhead: 0, daysBehind: 20 });
  t.ok(
    behind.rows.some((r) => r.title === 'Already over'),
    'daysBehind reaches back',
  );
  t.ok(
    behind.rows.some((r) => r.start === '2024-03-07T18:00:00+01:00'),
    'and so do past instances of a series',
  );
  const ny = parse(fixture('studio.ics'), {}, 'America/New_York');
  t.equal(ny.rows.find((r) => r.title === 'Open day')?.start, '2024-03-20T10:00:00-04:00', 'floating times follow the source zone');
  t.equal(
    ny.rows.find((r) => r.title === 'Call with the New York office')?.start,
    '2024-03-18T09:00:00-04:00',
    'a TZID without a VTIMEZONE is read in that IANA zone',
  );
  const cut = parse(fixture('studio.ics'), { maxOccurrences: 3 });
  t.equal(cut.rows.length, 3);
  t.match(cut.warnings, [/19 events fall in the window; the first 3 are kept/]);
  const bad = parse(fixture('studio.ics'), { daysAhead: 0 }, 'Not/AZone');
  t.match(bad.warnings, [/"Not\/AZone" is not a known zone; UTC was used/]);
});

t.test('odd and hostile rules do not stall the server', async (t) => {
  const started = Date.now();
  const d = parse(
    calendar(
      event('UID:never\nDTSTART:20240101T100000Z\nRRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30\nSUMMARY:Never'),
      event('UID:secondly\nDTSTART:20240101T100000Z\nRRULE:FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30\nSUMMARY:Never either'),
      event('UID:bad\nDTSTART:20240318T100000Z\nRRULE:FREQ=WEEKLY;BYMONTHDAY=3\nSUMMARY:Invalid rule'),
      event('UID:bad2\nDTSTART:20240318T100000Z\nRRULE:FREQ=YEARLY;BYMONTH=13\nSUMMARY:Unparsable rule'),
      event('UID:fine\nDTSTART:20240319T100000Z\nSUMMARY:Fine'),
      event('UID:mars\nDTSTART;TZID=Mars/Olympus_Mons:20240320T100000\nSUMMARY:Elsewhere'),
      event('UID:nostart\nSUMMARY:No start'),
    ),
  );
  t.ok(Date.now() - started < 5000, `answered in ${Date.now() - started} ms`);
  t.same(
    d.rows.map((r) => [r.title, r.start]),
    [
      ['Fine', '2024-03-19T11:00:00+01:00'],
      ['Elsewhere', '2024-03-20T10:00:00+01:00'],
    ],
  );
  const warnings = d.warnings.join('\n');
  t.match(
    warnings,
    /3 event\(s\) could not be read and were left out \(BYMONTH: invalid value "13"/,
    'the unparsable rule (which ical.js refuses for the whole document), the invalid rule and the event without a start',
  );
  t.match(warnings, /"Never".*could not be worked out within the limits|more repetitions than can be worked out/);
  t.match(warnings, /Unknown time zone\(s\) Mars\/Olympus_Mons; their times were read in Europe\/Berlin/);
});

t.test('bad documents', async (t) => {
  t.throws(() => parse(''), { message: 'the document is empty' });
  t.throws(() => parse('hello, world'), { message: /not an iCalendar document/ });
  t.throws(() => parse('<!doctype html><html><body>Calendar</body></html>'), { message: /HTML page, not a calendar/ });
  t.throws(() => parse('BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nSUMMARY:x\r\n'), { message: /the calendar could not be parsed/ });
  t.throws(() => parse('BEGIN:VCALENDAR\r\nthis is not a line\r\nEND:VCALENDAR\r\n'), { message: /the calendar could not be parsed/ });
  t.same(parse(calendar()).rows, [], 'a calendar without events is an empty dataset');
});

t.test('config schema', async (t) => {
  t.same([defaults.daysAhead, defaults.daysBehind, defaults.maxOccurrences], [30, 0, 1000]);
  t.notOk(icalConfigSchema.safeParse({ url: 'https://x.example/c.ics', daysAhead: 367 }).success);
  t.notOk(icalConfigSchema.safeParse({ url: 'https://x.example/c.ics', daysBehind: -1 }).success);
  t.notOk(icalConfigSchema.safeParse({ url: 'https://x.example/c.ics', maxOccurrences: 5001 }).success);
  t.notOk(icalConfigSchema.safeParse({ url: 'webcal://x.example/c.ics' }).success, 'webcal: is written as https:');
});
