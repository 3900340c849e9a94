/** Media: stored files, folders, collections, tags, uploads, assets and variants. */

/** A stored media file, content-addressed: media/<aa>/<bb>/<sha256>. */
export interface MediaFilesTable {
  sha256: string;
  size_bytes: number;
  content_type: string;
  created_at: string;
}

export interface ContentFoldersTable {
  id: string;
  name: string;
  parent_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface ContentCollectionsTable {
  id: string;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export interface ContentTagsTable {
  id: string;
  name: string;
  color: string | null;
  created_at: string;
}

/** A partial tus upload; its bytes are uploads/<id>.part. */
export interface UploadsTable {
  id: string;
  length_bytes: number;
  offset_bytes: number;
  /** JSON of the decoded Upload-Metadata. */
  metadata: string;
  filename: string | null;
  filetype: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  expires_at: string;
}

export type AssetKind = 'image' | 'video' | 'audio' | 'pdf' | 'website' | 'widget';
export type AssetState = 'uploading' | 'processing' | 'ready' | 'failed' | 'archived';

export interface AssetsTable {
  id: string;
  kind: AssetKind;
  state: AssetState;
  /** The state an archived asset returns to on restore. */
  state_before_archive: AssetState | null;
  name: string;
  /** The original file (null for websites and widgets). */
  sha256: string | null;
  size_bytes: number | null;
  content_type: string | null;
  original_filename: string | null;
  width: number | null;
  height: number | null;
  duration_ms: number | null;
  page_count: number | null;
  folder_id: string | null;
  failure_reason: string | null;
  /** 0..1 while processing. */
  progress: number | null;
  /** JSON: codecs, rotation, animated, ... */
  metadata: string;
  /** JSON website settings (kind 'website'). */
  website: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

export type VariantPurpose = 'player' | 'thumbnail' | 'poster' | 'preview';

export interface AssetVariantsTable {
  id: string;
  asset_id: string;
  purpose: VariantPurpose;
  content_type: string;
  width: number | null;
  height: number | null;
  /** PDF page number (1-based) of a page image. */
  page: number | null;
  size_bytes: number;
  sha256: string;
  created_at: string;
}

export interface AssetTagsTable {
  asset_id: string;
  tag_id: string;
}

export interface AssetCollectionsTable {
  asset_id: string;
  collection_id: string;
  added_at: string;
}
