/**
 * The credential and the last manifest, kept in a Storage (localStorage in the page).
 * The credential is the screen's only identity: it survives reloads and reboots, and is
 * forgotten only when the server says it is revoked or unknown.
 */
export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface StoredIdentity {
  screenId: string;
  credential: string;
  enrolledAt: string;
}

const IDENTITY_KEY = 'placard.player.identity';
const MANIFEST_KEY = 'placard.player.manifest';

export class PlayerStorage {
  constructor(private readonly store: KeyValueStore) {}

  identity(): StoredIdentity | null {
    try {
      const raw = this.store.getItem(IDENTITY_KEY);
      if (!raw) return null;
      const v = JSON.parse(raw);
      if (typeof v?.credential === 'string' && v.credential.startsWith('svc_device_') && typeof v.screenId === 'string') return v as StoredIdentity;
      return null;
    } catch {
      return null;
    }
  }

  saveIdentity(identity: StoredIdentity): void {
    this.store.setItem(IDENTITY_KEY, JSON.stringify(identity));
  }

  forgetIdentity(): void {
    this.store.removeItem(IDENTITY_KEY);
    this.store.removeItem(MANIFEST_KEY);
  }

  /** The last manifest as served plus its ETag, to play offline after a restart. */
  lastManifest(): { etag: string | null; manifest: unknown } | null {
    try {
      const raw = this.store.getItem(MANIFEST_KEY);
      return raw ? JSON.parse(raw) : null;
    } catch {
      return null;
    }
  }

  saveManifest(etag: string | null, manifest: unknown): void {
    try {
      this.store.setItem(MANIFEST_KEY, JSON.stringify({ etag, manifest }));
    } catch {
      // Storage full: the manifest is still in memory; offline restart loses it only.
    }
  }
}
