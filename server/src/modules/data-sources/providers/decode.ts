import iconv from 'iconv-lite';

/**
 * Bytes of a fetched document -> text (issue 17). The encoding comes from, in order: a
 * byte-order mark (certain), the labels the caller names (a config, the document's own XML
 * declaration, the Content-Type charset), else UTF-8 when the bytes are valid UTF-8, else
 * UTF-16 when every other byte is zero, else Windows-1252 (what "Latin-1" means on the
 * web, and what Excel writes on Western Windows). `guessed` says the last two happened, so
 * the provider warns the admin. UTF-8 is checked with TextDecoder (fatal); everything else
 * is decoded by iconv-lite, because Node's TextDecoder('windows-1252') reads 0x80-0x9F as
 * ISO-8859-1 control characters (no euro sign, no curly quotes or dashes).
 */

export interface DecodedText {
  text: string;
  /** The WHATWG name of the encoding used ('utf-8', 'utf-16le', 'windows-1252', ...). */
  encoding: string;
  /** True when nothing said which encoding it is and it was inferred from the bytes. */
  guessed: boolean;
}

function bom(body: Buffer): string | null {
  if (body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body.length >= 2 && body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  if (body.length >= 2 && body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  return null;
}

const UTF8 = /^(utf-?8|unicode-1-1-utf-8)$/i;
/** Latin-1 as the web means it (WHATWG: these labels are all Windows-1252). */
const LATIN1 = /^(iso-?8859-1|latin-?1|l1|us-ascii|ascii|cp819|ibm819|iso-ir-100|x-cp1252|cp1252)$/i;

/** The canonical name of an encoding label iconv-lite knows, or null. */
function known(label: string): string | null {
  const l = label.trim().toLowerCase();
  if (UTF8.test(l)) return 'utf-8';
  if (LATIN1.test(l)) return 'windows-1252';
  return iconv.encodingExists(l) ? l : null;
}

function strictUtf8(body: Buffer): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return null;
  }
}

/** Zero bytes at every odd (LE) or even (BE) position of the first 200: UTF-16 of mostly-ASCII text. */
function utf16Without(body: Buffer): 'utf-16le' | 'utf-16be' | null {
  const n = Math.min(body.length, 200) & ~1;
  if (n < 4) return null;
  let evenZero = 0;
  let oddZero = 0;
  for (let i = 0; i < n; i += 2) {
    if (body[i] === 0) evenZero++;
    if (body[i + 1] === 0) oddZero++;
  }
  const pairs = n / 2;
  if (oddZero >= pairs * 0.9 && evenZero === 0) return 'utf-16le';
  if (evenZero >= pairs * 0.9 && oddZero === 0) return 'utf-16be';
  return null;
}

/** Decodes `body`; `labels` are tried in order (unknown labels are skipped). */
export function decodeText(body: Buffer, labels: readonly (string | null | undefined)[] = []): DecodedText {
  const marked = bom(body);
  // iconv-lite drops the BOM itself.
  if (marked) return { text: iconv.decode(body, marked), encoding: marked, guessed: false };
  for (const label of labels) {
    const encoding = label ? known(label) : null;
    if (!encoding) continue;
    if (encoding !== 'utf-8') return { text: iconv.decode(body, encoding), encoding, guessed: false };
    const text = strictUtf8(body);
    if (text !== null) return { text, encoding, guessed: false };
    // Said UTF-8 but is not: what the bytes say decides.
    break;
  }
  const text = strictUtf8(body);
  if (text !== null) return { text, encoding: 'utf-8', guessed: false };
  const wide = utf16Without(body);
  if (wide) return { text: iconv.decode(body, wide), encoding: wide, guessed: true };
  return { text: iconv.decode(body, 'windows-1252'), encoding: 'windows-1252', guessed: true };
}

/** The charset parameter of a Content-Type header, if any. */
export function charsetOf(contentType: string | null | undefined): string | null {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return m ? m[1]! : null;
}

/** The encoding an XML declaration names (`<?xml version="1.0" encoding="ISO-8859-1"?>`), if any. */
export function xmlDeclaredEncoding(body: Buffer): string | null {
  const head = body.subarray(0, 200).toString('latin1');
  const m = /^\s*<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head);
  return m ? m[1]! : null;
}

/** A sentence for the warnings when the encoding was inferred. */
export function guessedEncodingWarning(decoded: DecodedText): string | null {
  if (!decoded.guessed) return null;
  const name = decoded.encoding === 'windows-1252' ? 'Windows-1252 (Latin-1)' : decoded.encoding.toUpperCase();
  return `The document does not say its character encoding and is not valid UTF-8; it was read as ${name}. If letters look wrong, set the encoding in the source's settings.`;
}
