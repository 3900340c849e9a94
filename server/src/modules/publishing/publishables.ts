import { ApiError } from '../../platform/http/errors.js';
import type { Publishable, PublishableType } from '../../platform/publications.js';
import { campaignPublishable } from '../campaigns/index.js';
import { layoutPublishable, playlistPublishable } from '../content/index.js';
import { schedulePublishable } from '../schedules/index.js';
import { widgetPublishable } from '../widgets/index.js';

/**
 * The content types the workflow serves (platform/publications.ts `Publishable`), one adapter
 * each, from the module that owns the type. A type without an adapter here is unknown.
 */
export const PUBLISHABLES: Partial<Record<PublishableType, Publishable>> = {
  playlist: playlistPublishable,
  layout: layoutPublishable,
  schedule: schedulePublishable,
  widget: widgetPublishable,
  campaign: campaignPublishable,
};

export const publishableTypes = (): string[] => Object.keys(PUBLISHABLES);

/** The adapter of `type`, or 404 `not_found` naming the types there are. */
export function publishableOf(type: string): Publishable {
  const adapter = Object.hasOwn(PUBLISHABLES, type) ? PUBLISHABLES[type as PublishableType] : undefined;
  if (!adapter) throw new ApiError('not_found', `No content type "${type.slice(0, 40)}": the types are ${publishableTypes().join(', ')}`);
  return adapter;
}
