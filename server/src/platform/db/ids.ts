import { v7 as uuidv7 } from 'uuid';

/** A new row id: a UUIDv7 (time-ordered, so ids sort by creation). */
export const newId = (): string => uuidv7();

/** An instant as the database stores it: ISO 8601 in UTC with milliseconds (now, or `ms`). */
export const nowIso = (ms = Date.now()): string => new Date(ms).toISOString();
