import type { XMLParser, X2jOptions } from 'fast-xml-parser';

/**
 * The two feed formats (docs/weather-alerts.md, "Formats"): CAP 1.2 Atom (entries carrying
 * `cap:` fields, as NWS and MeteoAlarm publish them, or a whole `<alert>` inside `<content>`)
 * and NWS GeoJSON (`features[].properties`). Both read into ParsedAlert; a document that is
 * not one of them throws FeedParseError and changes nothing.
 */
export type FeedFormat = 'cap-atom' | 'nws-geojson';

export interface ParsedAlert {
  identifier: string;
  sender: string;
  senderName: string;
  msgType: 'Alert' | 'Update' | 'Cancel';
  event: string;
  severity: string;
  urgency: string;
  certainty: string;
  headline: string;
  description: string;
  instruction: string;
  sent: string | null;
  effective: string | null;
  expires: string | null;
  ends: string | null;
  areaDesc: string;
  /** Zone codes: UGC and SAME (NWS), every CAP geocode value (Atom). */
  zones: string[];
  /** Identifiers of the messages this one updates or cancels. */
  references: string[];
}

export interface OfferedZone {
  code: string;
  /** 'UGC', 'SAME', or the CAP geocode valueName (EMMA_ID, FIPS6, NUTS3...). */
  kind: string;
  areaDesc: string;
}

export interface ParsedFeed {
  alerts: ParsedAlert[];
  zones: OfferedZone[];
}

export class FeedParseError extends Error {}

const MAX_TEXT = 8000;
const MAX_ALERTS = 2000;

const text = (v: unknown, max = MAX_TEXT): string => {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v).trim().slice(0, max);
  if (typeof v === 'object' && '#text' in (v as Record<string, unknown>)) return text((v as Record<string, unknown>)['#text'], max);
  return '';
};
const list = <T>(v: T | T[] | undefined | null): T[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);

/** An ISO instant, or null when absent or not a time. */
const instant = (v: unknown): string | null => {
  const s = text(v, 100);
  if (!s) return null;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
};

const msgTypeOf = (v: unknown): ParsedAlert['msgType'] => {
  const s = text(v, 50).toLowerCase();
  return s === 'update' ? 'Update' : s === 'cancel' ? 'Cancel' : 'Alert';
};

/** CAP's references: "sender,identifier,sent" triples separated by spaces. */
export function capReferences(v: string): string[] {
  return v
    .split(/\s+/)
    .filter(Boolean)
    .map((triple) => triple.split(','))
    .map((parts) => (parts.length >= 3 ? parts[1]! : parts[0]!))
    .filter(Boolean);
}

const unique = (xs: string[]) => [...new Set(xs.filter(Boolean))];

/** Pairs codes with areaDesc parts when they line up one to one (NWS lists both in order), else the whole description. */
function offered(codes: string[], kind: string, areaDesc: string): OfferedZone[] {
  const parts = areaDesc
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
  return codes.map((code, i) => ({ code, kind, areaDesc: parts.length === codes.length ? parts[i]! : areaDesc }));
}

function mergeZones(zones: OfferedZone[]): OfferedZone[] {
  const byCode = new Map<string, OfferedZone>();
  for (const z of zones) if (!byCode.has(z.code)) byCode.set(z.code, z);
  return [...byCode.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.code.localeCompare(b.code));
}

export function parseNwsGeoJson(body: string): ParsedFeed {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch (err) {
    throw new FeedParseError(`not JSON (${(err as Error).message})`);
  }
  const features = (doc as { features?: unknown })?.features;
  if (!doc || typeof doc !== 'object' || !Array.isArray(features)) throw new FeedParseError('not a GeoJSON FeatureCollection (no features list)');
  const alerts: ParsedAlert[] = [];
  const zones: OfferedZone[] = [];
  for (const f of features.slice(0, MAX_ALERTS)) {
    const p = (f as { properties?: Record<string, unknown> })?.properties;
    if (!p || typeof p !== 'object') continue;
    const identifier = text(p.id, 500) || text(p.identifier, 500);
    if (!identifier) continue;
    const geocode = (p.geocode ?? {}) as Record<string, unknown>;
    const ugc = list(geocode.UGC as string[]).map((c) => text(c, 50));
    const same = list(geocode.SAME as string[]).map((c) => text(c, 50));
    const areaDesc = text(p.areaDesc, 4000);
    zones.push(...offered(ugc, 'UGC', areaDesc), ...offered(same, 'SAME', areaDesc));
    const refs = list(p.references as unknown[]).map((r) =>
      typeof r === 'string' ? r : text((r as Record<string, unknown>)?.identifier, 500) || text((r as Record<string, unknown>)?.['@id'], 500),
    );
    alerts.push({
      identifier,
      sender: text(p.sender, 500),
      senderName: text(p.senderName, 500) || text(p.sender, 500),
      msgType: msgTypeOf(p.messageType),
      event: text(p.event, 500),
      severity: text(p.severity, 50) || 'Unknown',
      urgency: text(p.urgency, 50) || 'Unknown',
      certainty: text(p.certainty, 50) || 'Unknown',
      headline: text(p.headline, 1000),
      description: text(p.description),
      instruction: text(p.instruction),
      sent: instant(p.sent),
      effective: instant(p.effective),
      expires: instant(p.expires),
      ends: instant(p.ends),
      areaDesc,
      zones: unique([...ugc, ...same]),
      references: unique(refs),
    });
  }
  return { alerts, zones: mergeZones(zones) };
}

const XML_OPTIONS: X2jOptions = {
  ignoreAttributes: false,
  removeNSPrefix: true,
  parseTagValue: false,
  trimValues: true,
  processEntities: true,
  isArray: (name) => ['entry', 'info', 'area', 'geocode', 'value', 'valueName', 'link'].includes(name),
};

type Node = Record<string, unknown>;

/** The geocodes of a node: CAP 1.2 `<geocode><valueName/><value/></geocode>`, one pair per geocode or the Atom feeds' several pairs in one. */
function geocodes(node: Node): { kind: string; code: string }[] {
  const out: { kind: string; code: string }[] = [];
  for (const g of list(node.geocode as Node[])) {
    const names = list(g.valueName as unknown[]).map((v) => text(v, 100));
    const values = list(g.value as unknown[]).map((v) => text(v, 100));
    values.forEach((code, i) => {
      if (code) for (const c of code.split(/\s+/)) out.push({ kind: names[i] ?? names[0] ?? 'code', code: c });
    });
  }
  return out;
}

/** One Atom entry: its cap: fields, or the CAP `<alert>` it embeds (its first `<info>`). */
function atomEntry(entry: Node): { alert: ParsedAlert; zones: OfferedZone[] } | null {
  const content = entry.content as Node | undefined;
  const embedded = (content && typeof content === 'object' ? (content.alert as Node | undefined) : undefined) ?? (entry.alert as Node | undefined);
  const info = embedded ? (list(embedded.info as Node[])[0] ?? {}) : entry;
  const head = embedded ?? entry;
  const identifier = text(head.identifier, 500) || text(entry.id, 500);
  if (!identifier) return null;
  const areas = embedded ? list(info.area as Node[]) : [entry];
  const zones: OfferedZone[] = [];
  const codes: string[] = [];
  const descs: string[] = [];
  for (const area of areas) {
    const desc = text(area.areaDesc, 2000);
    if (desc) descs.push(desc);
    for (const g of geocodes(area)) {
      codes.push(g.code);
      zones.push({ code: g.code, kind: g.kind, areaDesc: desc });
    }
  }
  const summary = text(entry.summary);
  const alert: ParsedAlert = {
    identifier,
    sender: text(head.sender, 500),
    senderName: text(info.senderName, 500) || text((entry.author as Node | undefined)?.name, 500) || text(head.sender, 500),
    msgType: msgTypeOf(head.msgType ?? head.message_type),
    event: text(info.event, 500),
    severity: text(info.severity, 50) || 'Unknown',
    urgency: text(info.urgency, 50) || 'Unknown',
    certainty: text(info.certainty, 50) || 'Unknown',
    headline: text(info.headline, 1000) || text(entry.title, 1000),
    description: text(info.description) || summary,
    instruction: text(info.instruction),
    sent: instant(head.sent) ?? instant(entry.updated),
    effective: instant(info.effective),
    expires: instant(info.expires),
    ends: instant(info.ends),
    areaDesc: descs.join('; '),
    zones: unique(codes),
    references: unique(capReferences(text(head.references, 20_000))),
  };
  return { alert, zones };
}

export function parseCapAtom(body: string, xml: XMLParser): ParsedFeed {
  // CAP feeds have no DTD; entity declarations are refused rather than expanded.
  if (/<!ENTITY/i.test(body)) throw new FeedParseError('entity declarations (<!ENTITY>) are not accepted');
  let doc: Node;
  try {
    doc = xml.parse(body, true) as Node;
  } catch (err) {
    throw new FeedParseError(`not well-formed XML (${(err as Error).message})`);
  }
  const feed = doc.feed as Node | undefined;
  const alerts: ParsedAlert[] = [];
  const zones: OfferedZone[] = [];
  if ('feed' in doc) {
    const entries = feed && typeof feed === 'object' ? list(feed.entry as Node[]) : [];
    for (const entry of entries.slice(0, MAX_ALERTS)) {
      if (!entry || typeof entry !== 'object') continue;
      const read = atomEntry(entry);
      if (!read) continue;
      alerts.push(read.alert);
      zones.push(...read.zones);
    }
  } else if (doc.alert && typeof doc.alert === 'object') {
    // A single CAP document (what an Atom entry links to) is read as a feed of one.
    const read = atomEntry({ alert: doc.alert });
    if (read) {
      alerts.push(read.alert);
      zones.push(...read.zones);
    }
  } else {
    throw new FeedParseError('not an Atom feed or a CAP alert (no <feed> or <alert> root)');
  }
  return { alerts, zones: mergeZones(zones) };
}

/**
 * A fetched feed, read. fast-xml-parser (~1 MiB of heap) loads at the first CAP/Atom feed,
 * not at start (docs/performance.md, "Idle memory").
 */
export async function parseFeed(format: FeedFormat, body: Buffer): Promise<ParsedFeed> {
  const s = body.toString('utf8');
  if (format === 'nws-geojson') return parseNwsGeoJson(s);
  const { XMLParser } = await import('fast-xml-parser');
  return parseCapAtom(s, new XMLParser(XML_OPTIONS));
}
