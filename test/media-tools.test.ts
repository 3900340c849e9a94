import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseContentDisposition } from 'content-disposition';
import t from 'tap';
import { contentDisposition, ifRangeFresh, parseRange } from '../server/src/platform/http/send-file.js';
import { commandLine, processPdf, processVideo } from '../server/src/platform/media/av.js';
import { MediaTools } from '../server/src/platform/media/tools.js';
import { tempDataDir } from './helpers/harness.js';

t.test('parseRange: single ranges, clamping, suffixes, and what serves the whole file or 416', async (t) => {
  const size = 1000;
  t.same(parseRange(undefined, size), null, 'no header: the whole file');
  t.same(parseRange('bytes=0-99', size), { start: 0, end: 99 }, 'a-b');
  t.same(parseRange('bytes=500-', size), { start: 500, end: 999 }, 'a-');
  t.same(parseRange('bytes=-100', size), { start: 900, end: 999 }, '-N: the last N bytes');
  t.same(parseRange('bytes=-5000', size), { start: 0, end: 999 }, '-N longer than the file: all of it');
  t.same(parseRange('bytes=990-5000', size), { start: 990, end: 999 }, 'the end is clamped to the file');
  t.same(parseRange('bytes=999-999', size), { start: 999, end: 999 }, 'the last byte');
  t.same(parseRange('Bytes = 0-0', size), { start: 0, end: 0 }, 'unit and spaces are lenient');
  t.equal(parseRange('bytes=-0', size), 'unsatisfiable', '-0 selects nothing: 416');
  t.equal(parseRange('bytes=1000-', size), 'unsatisfiable', 'a start at the end: 416');
  t.equal(parseRange('bytes=5000-6000', size), 'unsatisfiable', 'a start past the end: 416');
  t.equal(parseRange('bytes=99999999999999999999-', size), 'unsatisfiable', 'a start beyond any integer: 416');
  t.equal(parseRange('bytes=0-10', 0), 'unsatisfiable', 'nothing to send from an empty file');
  t.equal(parseRange('bytes=-10', 0), 'unsatisfiable');
  for (const malformed of ['bytes=', 'bytes=-', 'bytes=abc', 'bytes=5-2', 'bytes=1-2-3', 'items=0-10', 'bytes 0-10', '0-10', 'bytes=--5', 'bytes=0x10-']) {
    t.equal(parseRange(malformed, size), null, `malformed ${JSON.stringify(malformed)}: ignored, the whole file`);
  }
  t.equal(parseRange('bytes=0-10,20-30', size), null, 'several ranges: the whole file (documented in docs/media.md)');
  t.equal(parseRange('bytes=0-0,-1', size), null);
  t.equal(parseRange('bytes=5000-,6000-', size), null, 'several ranges, even unsatisfiable ones: the whole file');
});

t.test('contentDisposition: quotes, CR/LF, paths, non-ASCII and RFC 5987 special characters', async (t) => {
  // What a client reads back (the same package's parser, as browsers read RFC 6266).
  const read = (header: string) => parseContentDisposition(header);
  const nameOf = (header: string) => read(header).parameters['filename*'] ?? read(header).parameters.filename;
  t.equal(contentDisposition('inline'), 'inline');
  t.equal(contentDisposition('inline', 'menu.jpg'), 'inline; filename="menu.jpg"');
  const quoted = contentDisposition('attachment', 'say "hi".png');
  t.equal(read(quoted).type, 'attachment');
  t.equal(nameOf(quoted), 'say "hi".png', 'quotes are escaped: they cannot end the quoted string');
  const crlf = contentDisposition('attachment', 'a\r\nSet-Cookie: x=1\r\n.png');
  t.notMatch(crlf, /[\r\n]/, 'no CR or LF reaches the header');
  t.equal(nameOf(crlf), 'aSet-Cookie: x=1.png');
  t.equal(nameOf(contentDisposition('attachment', '../../etc/passwd')), '....etcpasswd', 'no path separators');
  t.equal(nameOf(contentDisposition('attachment', 'a\\b;c%d.png')), 'ab;c%d.png');
  const unicode = contentDisposition('inline', 'Café €5 «menu».jpg');
  t.match(unicode, /filename\*=UTF-8''/, 'a name outside ISO-8859-1 gets filename*');
  t.notMatch(unicode.replace(/filename\*=.*$/, ''), /[^\x20-\x7e]/, 'and an ASCII-only fallback');
  t.equal(nameOf(unicode), 'Café €5 «menu».jpg', 'the exact UTF-8 name reads back');
  t.equal(nameOf(contentDisposition('attachment', "it's (final)*!.png")), "it's (final)*!.png");
  t.equal(nameOf(contentDisposition('inline', '\u0000\u0001')), 'file', 'nothing left: a neutral name');
  t.ok(contentDisposition('inline', 'x'.repeat(500)).length < 500, 'bounded');
});

t.test('ifRangeFresh: a strong ETag or the exact Last-Modified; weak tags and other dates never', async (t) => {
  const etag = '"abc"';
  const lm = 'Tue, 24 Nov 2026 09:00:00 GMT';
  t.equal(ifRangeFresh('"abc"', etag, lm), true);
  t.equal(ifRangeFresh(' "abc" ', etag, lm), true);
  t.equal(ifRangeFresh('"abd"', etag, lm), false);
  t.equal(ifRangeFresh('W/"abc"', etag, lm), false, 'a weak ETag never matches (strong comparison)');
  t.equal(ifRangeFresh(lm, etag, lm), true, 'the Last-Modified we send');
  t.equal(ifRangeFresh('Tue, 24 Nov 2026 09:00:01 GMT', etag, lm), false, 'a later date is not a match (it used to count as fresh)');
  t.equal(ifRangeFresh('Tue, 24 Nov 2026 08:59:59 GMT', etag, lm), false, 'an earlier one neither');
  t.equal(ifRangeFresh('Tuesday, 24-Nov-26 09:00:00 GMT', etag, lm), false, 'the same instant in another format: not an exact match');
  t.equal(ifRangeFresh('yesterday', etag, lm), false);
});

t.test('commandLine: niced commands go through nice -n 10', async (t) => {
  const [cmd, argv] = commandLine('/usr/bin/ffmpeg', ['-i', 'x'], true);
  t.match(path.basename(cmd), /^nice$/);
  t.same(argv, ['-n', '10', '/usr/bin/ffmpeg', '-i', 'x']);
  t.same(commandLine('/usr/bin/ffprobe', ['-v'], false), ['/usr/bin/ffprobe', ['-v']]);
});

/**
 * A wrapper that records the niceness it runs at (and its argv), then runs the real tool:
 * what the media pipeline really spawns, observed from the child's side.
 */
function wrapper(dir: string, name: string, real: string, log: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\necho "${name} $(nice)" >> '${log}'\nexec '${real}' "$@"\n`, { mode: 0o755 });
  return file;
}

t.test('ffmpeg and pdftoppm run at a lower priority (nice -n 10); probes need not', async (t) => {
  const dir = tempDataDir(t);
  const log = path.join(dir, 'calls.log');
  const found = new MediaTools({ ffmpegPath: null, ffprobePath: null });
  t.ok(found.ffmpeg && found.ffprobe, 'ffmpeg and ffprobe exist here');
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  const tools = new MediaTools({
    ffmpegPath: wrapper(bin, 'ffmpeg', found.ffmpeg!.path, log),
    ffprobePath: wrapper(bin, 'ffprobe', found.ffprobe!.path, log),
    pdftoppmPath: found.pdftoppm ? wrapper(bin, 'pdftoppm', found.pdftoppm, log) : null,
  });
  if (found.pdfinfo) wrapper(bin, 'pdfinfo', found.pdfinfo, log);
  const base = os.getPriority();
  const niced = String(Math.min(19, base + 10));

  const clip = path.join(dir, 'clip.webm');
  execFileSync(found.ffmpeg!.path, [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=160x120:rate=10:duration=1',
    '-c:v',
    'libvpx',
    '-deadline',
    'realtime',
    clip,
  ]);
  const work = path.join(dir, 'work');
  fs.mkdirSync(work);
  const video = await processVideo(tools, clip, work, 100_000_000, async () => {}, new AbortController().signal);
  t.equal(video.metadata.transcoded, true, 'a transcode ran');
  let calls = fs
    .readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(' '));
  const ffmpegCalls = calls.filter(([name]) => name === 'ffmpeg');
  t.ok(ffmpegCalls.length >= 2, `ffmpeg ran ${ffmpegCalls.length} times (poster frame, transcode)`);
  t.same(
    ffmpegCalls.map(([, n]) => n),
    ffmpegCalls.map(() => niced),
    `every ffmpeg run at niceness ${niced} (this process: ${base})`,
  );
  t.ok(
    calls.some(([name]) => name === 'ffprobe'),
    'ffprobe ran too',
  );

  if (!found.pdftoppm || !found.pdfinfo) {
    t.comment('poppler-utils is not installed here: pdftoppm is not checked');
    return;
  }
  t.equal((await tools.pdf()).available, true, 'poppler through the wrappers (its -v check is not a render)');
  fs.writeFileSync(log, '');
  const pdf = path.join(dir, 'one.pdf');
  const content = '0 0 1 rg 10 10 50 50 re f';
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Contents 4 0 R >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
  ];
  let text = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(text.length);
    text += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = text.length;
  text += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  fs.writeFileSync(pdf, text, 'latin1');
  const pdfWork = path.join(dir, 'pdf-work');
  fs.mkdirSync(pdfWork);
  const rendered = await processPdf(tools, pdf, pdfWork, 100_000_000, async () => {}, new AbortController().signal);
  t.equal(rendered.pageCount, 1);
  calls = fs
    .readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(' '));
  const pdftoppm = calls.filter(([name]) => name === 'pdftoppm');
  t.ok(pdftoppm.length >= 1, 'pdftoppm rendered the page');
  t.same(
    pdftoppm.map(([, n]) => n),
    pdftoppm.map(() => niced),
    `pdftoppm at niceness ${niced}`,
  );
});
