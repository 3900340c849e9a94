/**
 * The content types a campaign releases, and their adapters (platform/publications.ts).
 */
import type { Publishable } from '../../platform/publications.js';
import { layoutPublishable, playlistPublishable } from '../content/index.js';
import { widgetPublishable } from '../widgets/index.js';
import type { ContentType } from './campaigns.repo.js';

export const CONTENT_ADAPTERS: Record<ContentType, Publishable> = {
  playlist: playlistPublishable,
  layout: layoutPublishable,
  widget: widgetPublishable,
};
