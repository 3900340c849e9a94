/**
 * The player manifest's shapes (docs/content.md "The player manifest"; the route's zod schema
 * is in manifest.routes.ts): items, playlists, media, data outputs and widget bundles.
 */
import type { Daypart } from './plan.js';
import type { Warning } from './resolve.js';
import type { OutputAnswer, View } from '../data-sources/index.js';
import type { WidgetBundleAnswer } from '../widgets/index.js';

export interface ManifestItem {
  id: string;
  playlistId: string;
  kind: string;
  assetId: string | null;
  variantId: string | null;
  posterVariantId: string | null;
  pageVariantIds: string[];
  url: string | null;
  name: string;
  durationMs: number;
  transition: { type: string; durationMs: number };
  validFrom: string | null;
  validUntil: string | null;
  dayparts: Daypart[];
  windows: { startsAt: string; endsAt: string }[] | null;
  fit: 'contain' | 'cover' | 'fill';
  muted: boolean;
  /** Widget items: the widget and the `widgets[]` bundle to show (null for assets). */
  widgetId: string | null;
  bundleId: string | null;
}

export interface ManifestPlaylist {
  id: string;
  name: string;
  items: ManifestItem[];
}

export interface ManifestMedia {
  assetId: string;
  variantId: string;
  purpose: string;
  url: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  width: number | null;
  height: number | null;
}

/** A data output the screen downloads (DESIGN.md section 12): a source's rows, or a view's. */
export interface ManifestData {
  outputId: string;
  sourceId: string;
  viewKey: string | null;
  revision: number;
  url: string;
  sha256: string;
  sizeBytes: number;
  /** The rows' image addresses that are cached media (their variants are in `media`). */
  images: { url: string; assetId: string; variantId: string }[];
}

/** Answers a data source's output for (source, view); the data-sources module's `outputFor`. */
export type OutputResolver = (sourceId: string, view: View | null) => Promise<OutputAnswer>;

/** A widget bundle the screen downloads (w-contract "Manifest additions"): one self-contained HTML document. */
export interface ManifestWidget {
  widgetId: string;
  bundleId: string;
  revision: number;
  url: string;
  sha256: string;
  sizeBytes: number;
  /** The media the bundle names as `placard-media:<assetId>`, each with the variant (in `media`) to put there. */
  images: { assetId: string; variantId: string }[];
}

/** Answers a widget's current bundle (built when missing); the widgets module's `widgetBundleFor`. */
export type WidgetResolver = (widgetId: string) => Promise<WidgetBundleAnswer>;

/** One overlay in the manifest's `overlays` (docs/plugins.md "The manifest's overlays"). */
export interface ManifestOverlay {
  instanceId: string;
  pluginId: string;
  name: string;
  revision: number;
  config: unknown;
  /** A brand bug's logo: the variant (also in `media[]`) the player shows. */
  logo?: Pick<ManifestMedia, 'assetId' | 'variantId' | 'url' | 'contentType' | 'sizeBytes' | 'sha256' | 'width' | 'height'>;
}

export interface Manifest {
  screenId: string;
  revision: number;
  generatedAt: string;
  validUntil: string;
  refreshAfter: string;
  timeZone: string;
  timeline: {
    startsAt: string;
    endsAt: string;
    source: { type: string; id: string | null };
    content: { type: string; id: string } | null;
    /** The campaign the segment's schedule shows (docs/campaigns.md), else null. */
    campaign: { id: string; name: string } | null;
    playlist?: ManifestPlaylist;
    layout?: unknown;
    /** A takeover's or override's message (content.type 'message'). */
    message?: { text: string; severity: 'info' | 'warning' | 'emergency' };
    /** A takeover's or override's audio choice. */
    audio?: 'force-on' | 'default';
  }[];
  media: ManifestMedia[];
  data: ManifestData[];
  widgets: ManifestWidget[];
  /** Plugin overlays drawn above the content (docs/plugins.md). */
  overlays: ManifestOverlay[];
  warnings: Warning[];
  /** An update offered to the screen (docs/update-deployments.md), else null. */
  update: { deploymentId: string; releaseId: string; version: string; family: string } | null;
  /** The presentation network the screen plays in step with (docs/presentation-networks.md), else null. */
  presentationNetwork: { id: string; name: string; epoch: string; leaderScreenId: string | null; position: number; memberCount: number } | null;
}

export const variantUrl = (assetId: string, variantId: string) => `/api/v1/player/assets/${assetId}/variants/${variantId}`;
