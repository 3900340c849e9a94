import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { isFaststart } from '../server/src/platform/media/av.js';
import { signIn } from './helpers/auth.js';
import { startApp, tempDataDir, type TestApp } from './helpers/harness.js';
import { settledAsset, sha256, tusUpload, uploadAsset } from './helpers/media.js';
import { MediaTools } from '../server/src/platform/media/tools.js';

const run = promisify(execFile);

/** Makes a test file with the app's own ffmpeg (lavfi sources: nothing downloaded). */
async function ffmpeg(app: TestApp, dir: string, name: string, args: string[]): Promise<Buffer> {
  const out = path.join(dir, name);
  await run(app.deps.tools.ffmpeg!.path, ['-hide_banner', '-v', 'error', '-y', ...args, out]);
  return fs.readFileSync(out);
}

const SRC = ['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25:duration=2', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=2'];

/** A hand-written PDF with `pages` pages (offsets computed, so the xref table is valid). */
function makePdf(pages: number): Buffer {
  const objects: string[] = [];
  objects.push('<< /Type /Catalog /Pages 2 0 R >>');
  const kids = Array.from({ length: pages }, (_, i) => `${3 + i * 2} 0 R`).join(' ');
  objects.push(`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`);
  for (let i = 0; i < pages; i++) {
    const content = `0 0 1 rg 50 50 200 ${100 + i * 50} re f`;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 400] /Contents ${4 + i * 2} 0 R >>`);
    objects.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
  }
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

t.test('video: probe, poster, thumbnail, and a browser-playable MP4 variant', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const dir = tempDataDir(t);

  // VP8/Vorbis WebM: transcoded to H.264/AAC MP4 with faststart.
  const webm = await ffmpeg(app, dir, 'clip.webm', [...SRC, '-c:v', 'libvpx', '-b:v', '300k', '-c:a', 'libopus', '-shortest']);
  const a = await uploadAsset(app, owner, webm, 'clip.webm');
  t.equal(a.kind, 'video');
  t.equal(a.contentType, 'video/webm');
  const ready = await settledAsset(app, owner, a.id, 120_000);
  t.equal(ready.state, 'ready', ready.failureReason ?? '');
  t.same([ready.width, ready.height], [320, 240]);
  t.ok(Math.abs(ready.durationMs - 2000) < 150, `duration ${ready.durationMs} ms`);
  t.equal(ready.metadata.videoCodec, 'vp8');
  t.equal(ready.metadata.transcoded, true);
  t.equal(ready.progress, null, 'progress cleared when done');
  const player = ready.variants.find((v: any) => v.purpose === 'player');
  t.equal(player.contentType, 'video/mp4');
  t.not(player.sha256, ready.sha256);
  const poster = ready.variants.find((v: any) => v.purpose === 'poster');
  t.equal(poster.contentType, 'image/jpeg');
  t.same([poster.width, poster.height], [320, 240]);
  t.ok(ready.variants.find((v: any) => v.purpose === 'thumbnail'));
  const playerFile = path.join(app.dataDir, 'media', player.sha256.slice(0, 2), player.sha256.slice(2, 4), player.sha256);
  t.ok(await isFaststart(playerFile), 'moov before mdat');
  const { stdout } = await run(app.deps.tools.ffprobe!.path, ['-v', 'error', '-print_format', 'json', '-show_streams', playerFile]);
  const streams = JSON.parse(stdout).streams as any[];
  t.same(streams.map((s) => s.codec_name).sort(), ['aac', 'h264']);
  const job = await app.deps.db.selectFrom('jobs').selectAll().where('payload', 'like', `%${a.id}%`).executeTakeFirstOrThrow();
  t.equal(job.state, 'done');
  t.equal(job.progress, 1);
  // The console preview of a video is its playable variant.
  const preview = await app.fetch(`/api/v1/assets/${a.id}/preview`, { headers: { ...owner.headers, range: 'bytes=0-99' } });
  t.equal(preview.status, 206);
  t.equal(preview.headers.get('content-type'), 'video/mp4');
  t.equal(preview.headers.get('etag'), `"${player.sha256}"`);

  // A longer transcode reports ffmpeg's progress on the asset while it runs.
  const longer = await ffmpeg(app, dir, 'longer.webm', [
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=640x480:rate=25:duration=40',
    '-c:v',
    'libvpx',
    '-deadline',
    'realtime',
    '-cpu-used',
    '8',
    '-b:v',
    '500k',
  ]);
  const la = await uploadAsset(app, owner, longer, 'longer.webm');
  const seen = new Set<number>();
  for (let i = 0; i < 1200; i++) {
    const cur = (await app.json(`/api/v1/assets/${la.id}`, { headers: owner.headers })).body.data;
    if (cur.state !== 'processing') break;
    if (cur.progress !== null) seen.add(cur.progress);
    await new Promise((r) => setTimeout(r, 50));
  }
  const middle = [...seen].filter((p) => p > 0.1 && p < 1);
  t.ok(middle.length > 0, `progress observed while transcoding: ${[...seen].sort().join(', ')}`);
  t.equal((await settledAsset(app, owner, la.id, 120_000)).state, 'ready');

  // H.264/AAC MP4 with faststart: the original is the player variant.
  const good = await ffmpeg(app, dir, 'good.mp4', [
    ...SRC,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    '-movflags',
    '+faststart',
  ]);
  const g = await settledAsset(app, owner, (await uploadAsset(app, owner, good, 'good.mp4')).id, 120_000);
  t.equal(g.state, 'ready', g.failureReason ?? '');
  const gp = g.variants.filter((v: any) => v.purpose === 'player');
  t.equal(gp.length, 1);
  t.equal(gp[0].sha256, sha256(good), 'no needless transcode');

  // Same codecs, moov at the end: remuxed with faststart, not re-encoded.
  const late = await ffmpeg(app, dir, 'late.mp4', [...SRC, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest']);
  t.notOk(await isFaststart(path.join(dir, 'late.mp4')), 'the source has moov last');
  const l = await settledAsset(app, owner, (await uploadAsset(app, owner, late, 'late.mp4')).id, 120_000);
  const lp = l.variants.find((v: any) => v.purpose === 'player');
  t.not(lp.sha256, sha256(late));
  t.equal(l.metadata.transcoded, false, 'remuxed, not transcoded');

  // Rotation metadata: dimensions as displayed.
  const rotated = await ffmpeg(app, dir, 'rotated.mp4', ['-i', path.join(dir, 'good.mp4'), '-c', 'copy', '-metadata:s:v:0', 'rotate=90']);
  const r = await settledAsset(app, owner, (await uploadAsset(app, owner, rotated, 'rotated.mp4')).id, 120_000);
  t.equal(r.state, 'ready', r.failureReason ?? '');
  t.equal(r.metadata.rotation, 90);
  t.same([r.width, r.height], [240, 320]);
  const rposter = r.variants.find((v: any) => v.purpose === 'poster');
  t.same([rposter.width, rposter.height], [240, 320], 'the poster is upright');
});

t.test('audio: MP3 plays as is, WAV becomes AAC', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const dir = tempDataDir(t);
  const sine = ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1.5'];
  const mp3 = await ffmpeg(app, dir, 'tone.mp3', [...sine, '-c:a', 'libmp3lame', '-b:a', '128k']);
  const m = await settledAsset(app, owner, (await uploadAsset(app, owner, mp3, 'tone.mp3')).id);
  t.equal(m.kind, 'audio');
  t.equal(m.state, 'ready', m.failureReason ?? '');
  t.ok(Math.abs(m.durationMs - 1500) < 150, `duration ${m.durationMs}`);
  t.same(
    m.variants.map((v: any) => [v.purpose, v.contentType, v.sha256]),
    [['player', 'audio/mpeg', sha256(mp3)]],
  );

  const wav = await ffmpeg(app, dir, 'tone.wav', sine);
  const w = await settledAsset(app, owner, (await uploadAsset(app, owner, wav, 'tone.wav')).id);
  t.equal(w.kind, 'audio');
  t.equal(w.state, 'ready', w.failureReason ?? '');
  t.equal(w.metadata.transcoded, true);
  t.same(
    w.variants.map((v: any) => [v.purpose, v.contentType]),
    [['player', 'audio/mp4']],
  );
});

t.test('PDF: pages rendered to images', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const pdf = makePdf(2);
  const support = await app.deps.tools.pdf();
  if (!support.available) {
    t.comment(`poppler-utils is not installed here (${support.detail}): the rendering is not checked; the refusal is, below`);
    return;
  }
  const p = await settledAsset(app, owner, (await uploadAsset(app, owner, pdf, 'menu.pdf')).id);
  t.equal(p.kind, 'pdf');
  t.equal(p.state, 'ready', p.failureReason ?? '');
  t.equal(p.pageCount, 2);
  const pages = p.variants.filter((v: any) => v.purpose === 'player');
  t.same(
    pages.map((v: any) => [v.page, v.contentType, v.height]),
    [
      [1, 'image/webp', 1920],
      [2, 'image/webp', 1920],
    ],
  );
  t.ok(
    pages.every((v: any) => Math.abs(v.width - 1440) <= 2),
    '3:4 pages, 1920 on the long side',
  );
  t.not(pages[0].sha256, pages[1].sha256, 'the pages differ');
  t.ok(p.variants.some((v: any) => v.purpose === 'thumbnail'));
  const preview = await app.fetch(`/api/v1/assets/${p.id}/preview`, { headers: owner.headers });
  t.equal(preview.headers.get('content-type'), 'image/webp', 'a PDF previews as its first page');
});

t.test('PDF without poppler: capabilities say so and complete answers 415 naming the package', async (t) => {
  const app = await startApp(t, { config: { pdftoppmPath: '/nonexistent/poppler/pdftoppm' } });
  const owner = await signIn(app);
  const caps = await app.json('/api/v1/media/capabilities', { headers: owner.headers });
  t.equal(caps.status, 200);
  t.equal(caps.body.data.kinds.pdf.available, false);
  t.match(caps.body.data.kinds.pdf.detail, /poppler-utils/);
  t.equal(caps.body.data.kinds.image.available, true, 'the rest still works');
  const id = await tusUpload(app, owner, makePdf(1), { filename: 'menu.pdf' });
  const res = await app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers: owner.headers, json: {} });
  t.equal(res.status, 415);
  t.equal(res.body.error.code, 'unsupported_media_type');
  t.match(res.body.error.message, /PDF is unavailable on this server.*poppler-utils/);
  t.same(await app.deps.db.selectFrom('assets').select('id').execute(), [], 'no asset was made');
  t.equal(
    (await app.fetch(`/api/v1/uploads/${id}`, { method: 'HEAD', headers: { ...owner.headers, 'tus-resumable': '1.0.0' } })).status,
    404,
    'the upload is discarded',
  );
});

t.test('video and audio without ffmpeg: capabilities say so and complete answers 415 up front', async (t) => {
  const app = await startApp(t, { config: { ffmpegPath: '/nonexistent/ffmpeg', ffprobePath: '/nonexistent/ffprobe' } });
  const owner = await signIn(app);
  const caps = await app.json('/api/v1/media/capabilities', { headers: owner.headers });
  t.equal(caps.body.data.kinds.video.available, false);
  t.equal(caps.body.data.kinds.audio.available, false);
  t.match(caps.body.data.kinds.video.detail, /ffmpeg at \/nonexistent\/ffmpeg is not usable/);
  // The media are made with the ffmpeg this machine does have.
  const real = new MediaTools({ ffmpegPath: null, ffprobePath: null });
  const dir = tempDataDir(t);
  const make = async (name: string, args: string[]) => {
    await run(real.ffmpeg!.path, ['-hide_banner', '-v', 'error', '-y', ...args, path.join(dir, name)]);
    return fs.readFileSync(path.join(dir, name));
  };
  const mp4 = await make('clip.mp4', [...SRC, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest']);
  const mp3 = await make('tone.mp3', ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-c:a', 'libmp3lame']);
  for (const [bytes, name, kind] of [
    [mp4, 'clip.mp4', 'Video'],
    [mp3, 'tone.mp3', 'audio'],
  ] as const) {
    const id = await tusUpload(app, owner, bytes, { filename: name });
    const res = await app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers: owner.headers, json: {} });
    t.equal(res.status, 415, `${name}: refused up front, not failed after retries`);
    t.equal(res.body.error.code, 'unsupported_media_type');
    t.match(res.body.error.message, /Video and audio are unavailable on this server.*ffmpeg/, `${kind}: ${res.body.error.message}`);
  }
  t.same(await app.deps.db.selectFrom('assets').select('id').execute(), [], 'no asset was made');
  t.same(await app.deps.db.selectFrom('jobs').select('id').execute(), [], 'no job was queued');
});

t.test('audio-only MP4 and WebM become audio assets (ffprobe decides, not the container)', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const dir = tempDataDir(t);
  const sine = ['-f', 'lavfi', '-i', 'sine=frequency=330:duration=1.5'];
  // The mp4 muxer (brand isom): file-type calls it video/mp4, whatever the name says.
  const m4a = await ffmpeg(app, dir, 'voice.m4a', [...sine, '-c:a', 'aac', '-b:a', '96k', '-f', 'mp4']);
  const webm = await ffmpeg(app, dir, 'voice.webm', [...sine, '-c:a', 'libopus', '-f', 'webm']);
  const a = await uploadAsset(app, owner, m4a, 'voice.m4a');
  t.equal(a.kind, 'audio', 'an MP4 with only sound is audio');
  t.equal(a.contentType, 'audio/mp4');
  const ra = await settledAsset(app, owner, a.id);
  t.equal(ra.state, 'ready', ra.failureReason ?? '');
  t.ok(Math.abs(ra.durationMs - 1500) < 150, `duration ${ra.durationMs}`);
  t.same(
    ra.variants.map((v: any) => [v.purpose, v.contentType, v.sha256]),
    [['player', 'audio/mp4', sha256(m4a)]],
    'AAC in MP4 plays as it is',
  );

  const w = await uploadAsset(app, owner, webm, 'voice.webm');
  t.equal(w.kind, 'audio', 'a WebM with only sound is audio');
  t.equal(w.contentType, 'audio/webm');
  const rw = await settledAsset(app, owner, w.id);
  t.equal(rw.state, 'ready', rw.failureReason ?? '');
  t.equal(rw.metadata.audioCodec, 'opus');
  t.same(
    rw.variants.map((v: any) => [v.purpose, v.contentType]),
    [['player', 'audio/mp4']],
    'Opus becomes AAC',
  );

  // And the other way: a video with sound is still video.
  const clip = await ffmpeg(app, dir, 'clip.webm', [...SRC, '-c:v', 'libvpx', '-deadline', 'realtime', '-c:a', 'libopus', '-shortest']);
  const v = await uploadAsset(app, owner, clip, 'clip.webm');
  t.equal(v.kind, 'video');
  t.equal(v.contentType, 'video/webm');
});
