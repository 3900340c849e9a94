/**
 * The content types a campaign releases, and their adapters (platform/publications.ts).
 * A type without an adapter yet is released as it is (it must exist; no publication made).
 */
import type { Publishable } from '../../platform/publications.js';
import { layoutPublishable, playlistPublishable } from '../content/index.js';
import type { ContentType } from './campaigns.repo.js';

export const CONTENT_ADAPTERS: Partial<Record<ContentType, Publishable>> = {
  playlist: playlistPublishable,
  layout: layoutPublishable,
  // TODO(issue 20, merge): widget: widgetPublishable (widgets/index.ts, p-c)
};
