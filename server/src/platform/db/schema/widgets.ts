/** Widgets (issue 19): widgets, their compiled bundles and uploaded preview images. */

export interface WidgetsTable {
  id: string;
  name: string;
  /** A built-in type (clock, text, ticker, qr, countdown, table, feed-list, agenda, carousel) or custom. */
  type: string;
  /** JSON: the type's settings (its zod schema). */
  settings: string;
  /** The custom type's Liquid template; null for built-in types. */
  template: string | null;
  /** JSON {sourceId, view} or null. */
  binding: string | null;
  /** Bumped on every change (If-Match). */
  revision: number;
  /** Bumped when template, settings, binding or type change (an uploaded preview is valid for one). */
  content_revision: number;
  /** JSON [{message, line, column}]: why the last build failed (empty when it did not). */
  errors: string;
  created_at: string;
  updated_at: string;
  created_by: string | null;
  updated_by: string | null;
  /** JSON WidgetSnapshot: unpublished changes (approvals on); null when there are none. */
  draft: string | null;
  /** When the row (what screens play) was last published; null: never published, players treat it as absent. */
  published_at: string | null;
}

export interface WidgetBundlesTable {
  id: string;
  widget_id: string;
  /** The widget's revision it was built from. */
  revision: number;
  sha256: string;
  /** sha256 of what it was built from (widget revision, data, images): the same inputs build no new version. */
  input_sha256: string;
  size_bytes: number;
  built_at: string;
  /** JSON [{assetId}]. */
  images: string;
  source_id: string | null;
  source_revision: number | null;
}

export interface WidgetBundleBlobsTable {
  sha256: string;
  bytes: Buffer;
  size_bytes: number;
  created_at: string;
}

export interface WidgetPreviewImagesTable {
  widget_id: string;
  content_revision: number;
  bytes: Buffer;
  width: number;
  height: number;
  uploaded_at: string;
  uploaded_by: string | null;
}
