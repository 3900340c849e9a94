import type http from 'node:http';
import type { Handler } from './data-sources.js';

/**
 * Real-world shaped weather alert documents: api.weather.gov's /alerts/active GeoJSON and
 * CAP 1.2 Atom feeds (MeteoAlarm's and the NWS's cap: entry fields, and an entry embedding a
 * whole CAP <alert>). Times are given by the test (one clock read).
 */
export interface NwsAlert {
  id: string;
  event: string;
  severity?: string;
  urgency?: string;
  certainty?: string;
  messageType?: 'Alert' | 'Update' | 'Cancel';
  references?: string[];
  sent: string;
  expires: string;
  ends?: string | null;
  ugc?: string[];
  same?: string[];
  areaDesc?: string;
  headline?: string;
  description?: string;
  instruction?: string | null;
}

export function nwsGeoJson(alerts: NwsAlert[]): string {
  return JSON.stringify({
    '@context': ['https://geojson.org/geojson-ld/geojson-context.jsonld', { '@version': '1.1', wx: 'https://api.weather.gov/ontology#' }],
    type: 'FeatureCollection',
    features: alerts.map((a) => ({
      id: `https://api.weather.gov/alerts/${a.id}`,
      type: 'Feature',
      geometry: null,
      properties: {
        '@id': `https://api.weather.gov/alerts/${a.id}`,
        '@type': 'wx:Alert',
        id: a.id,
        areaDesc: a.areaDesc ?? 'Oklahoma; Cleveland',
        geocode: { SAME: a.same ?? ['040109', '040027'], UGC: a.ugc ?? ['OKC109', 'OKC027'] },
        affectedZones: (a.ugc ?? ['OKC109', 'OKC027']).map((z) => `https://api.weather.gov/zones/county/${z}`),
        references: (a.references ?? []).map((r) => ({
          '@id': `https://api.weather.gov/alerts/${r}`,
          identifier: r,
          sender: 'w-nws.webmaster@noaa.gov',
          sent: a.sent,
        })),
        sent: a.sent,
        effective: a.sent,
        onset: a.sent,
        expires: a.expires,
        ends: a.ends ?? null,
        status: 'Actual',
        messageType: a.messageType ?? 'Alert',
        category: 'Met',
        severity: a.severity ?? 'Extreme',
        certainty: a.certainty ?? 'Observed',
        urgency: a.urgency ?? 'Immediate',
        event: a.event,
        sender: 'w-nws.webmaster@noaa.gov',
        senderName: 'NWS Norman OK',
        headline: a.headline ?? `${a.event} issued by NWS Norman OK`,
        description: a.description ?? `At 405 PM CDT, a confirmed ${a.event.toLowerCase()} was located near Moore, moving northeast at 30 mph.`,
        instruction:
          a.instruction === undefined ? 'TAKE COVER NOW! Move to a basement or an interior room on the lowest floor of a sturdy building.' : a.instruction,
        response: 'Shelter',
        parameters: { AWIPSidentifier: ['TOROUN'], WMOidentifier: ['WFUS54 KOUN 202105'], VTEC: ['/O.NEW.KOUN.TO.W.0042.260520T2105Z-260520T2145Z/'] },
      },
    })),
    title: 'Current watches, warnings, and advisories for Oklahoma',
    updated: alerts[0]?.sent ?? '2026-01-01T00:00:00+00:00',
  });
}

export interface CapEntry {
  identifier: string;
  event: string;
  severity?: string;
  urgency?: string;
  certainty?: string;
  msgType?: 'Alert' | 'Update' | 'Cancel';
  /** CAP references: "sender,identifier,sent" triples. */
  references?: string;
  sent: string;
  expires: string;
  areaDesc: string;
  geocodes: [string, string][];
  headline?: string;
  description?: string;
  /** Embed the whole CAP <alert> in <content> instead of cap: fields on the entry. */
  embedded?: boolean;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function capFields(e: CapEntry): string {
  return `
    <cap:identifier>${esc(e.identifier)}</cap:identifier>
    <cap:sender>meteoalarm-noreply@zamg.ac.at</cap:sender>
    <cap:sent>${e.sent}</cap:sent>
    <cap:status>Actual</cap:status>
    <cap:message_type>${e.msgType ?? 'Alert'}</cap:message_type>
    ${e.references ? `<cap:references>${esc(e.references)}</cap:references>` : ''}
    <cap:scope>Public</cap:scope>
    <cap:event>${esc(e.event)}</cap:event>
    <cap:urgency>${e.urgency ?? 'Immediate'}</cap:urgency>
    <cap:severity>${e.severity ?? 'Severe'}</cap:severity>
    <cap:certainty>${e.certainty ?? 'Likely'}</cap:certainty>
    <cap:effective>${e.sent}</cap:effective>
    <cap:onset>${e.sent}</cap:onset>
    <cap:expires>${e.expires}</cap:expires>
    <cap:areaDesc>${esc(e.areaDesc)}</cap:areaDesc>
    ${e.geocodes.map(([n, v]) => `<cap:geocode><valueName>${n}</valueName><value>${v}</value></cap:geocode>`).join('\n    ')}`;
}

function embeddedAlert(e: CapEntry): string {
  return `<alert xmlns="urn:oasis:names:tc:emergency:cap:1.2">
      <identifier>${esc(e.identifier)}</identifier>
      <sender>w-nws.webmaster@noaa.gov</sender>
      <sent>${e.sent}</sent>
      <status>Actual</status>
      <msgType>${e.msgType ?? 'Alert'}</msgType>
      <scope>Public</scope>
      ${e.references ? `<references>${esc(e.references)}</references>` : ''}
      <info>
        <language>en-US</language>
        <category>Met</category>
        <event>${esc(e.event)}</event>
        <urgency>${e.urgency ?? 'Immediate'}</urgency>
        <severity>${e.severity ?? 'Severe'}</severity>
        <certainty>${e.certainty ?? 'Likely'}</certainty>
        <effective>${e.sent}</effective>
        <expires>${e.expires}</expires>
        <senderName>NWS Miami FL</senderName>
        <headline>${esc(e.headline ?? `${e.event} issued`)}</headline>
        <description>${esc(e.description ?? 'Details follow.')}</description>
        <instruction>Stay indoors.</instruction>
        <area>
          <areaDesc>${esc(e.areaDesc)}</areaDesc>
          ${e.geocodes.map(([n, v]) => `<geocode><valueName>${n}</valueName><value>${v}</value></geocode>`).join('\n          ')}
        </area>
      </info>
    </alert>`;
}

export function capAtom(entries: CapEntry[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:cap="urn:oasis:names:tc:emergency:cap:1.2">
  <id>https://feeds.meteoalarm.org/feeds/meteoalarm-legacy-atom-austria</id>
  <title>MeteoAlarm Austria</title>
  <updated>${entries[0]?.sent ?? '2026-01-01T00:00:00+00:00'}</updated>
  <author><name>MeteoAlarm</name></author>
  ${entries
    .map(
      (e) => `<entry>
    <id>https://feeds.meteoalarm.org/api/v1/warnings/feeds-austria/${esc(e.identifier)}</id>
    <title>${esc(e.headline ?? `${e.event} for ${e.areaDesc}`)}</title>
    <updated>${e.sent}</updated>
    <author><name>ZAMG Zentralanstalt für Meteorologie und Geodynamik</name></author>
    <link href="https://feeds.meteoalarm.org/api/v1/warnings/feeds-austria/${esc(e.identifier)}" type="application/cap+xml"/>
    <summary>${esc(e.description ?? `${e.event} in ${e.areaDesc}`)}</summary>
    ${e.embedded ? `<content type="application/cap+xml">${embeddedAlert(e)}</content>` : capFields(e)}
  </entry>`,
    )
    .join('\n  ')}
</feed>`;
}

/** Serves `doc()` with an ETag of its content (304 to a matching If-None-Match). */
export function served(contentType: string, doc: () => string): Handler {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    const body = doc();
    const etag = `"${Buffer.from(body).length}-${body.length % 997}-${hash(body)}"`;
    if (req.headers['if-none-match'] === etag) return res.writeHead(304, { etag }).end();
    res.writeHead(200, { 'content-type': contentType, etag }).end(body);
  };
}

function hash(s: string): string {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  return (h >>> 0).toString(16);
}
