/**
 * The approvals setting as content's routes honour it (issue 20, docs/content.md "Drafts and
 * publications"): with approvals required, writes change drafts only, the direct publish
 * route answers 409 (a submission is the way to screens), and deleting what screens play
 * needs the publisher role.
 */
import type { Db } from '../../platform/db/database.js';
import { ApiError } from '../../platform/http/errors.js';
import type { PublishableType } from '../../platform/publications.js';
import { getSettings } from '../system/index.js';

/** Whether approvals are required (settings.approvals.required). */
export async function approvalsRequired(db: Db): Promise<boolean> {
  return (await getSettings(db)).approvals.required;
}

/** 409 for a direct publish while approvals are required. */
export function submitInstead(type: PublishableType, id: string): ApiError {
  return new ApiError('conflict', `Approvals are required: submit it for approval (POST /api/v1/content-submissions/${type}/${id})`);
}

/** 403 for an editor deleting something screens play while approvals are required. */
export function publisherNeededToDelete(what: string): ApiError {
  return new ApiError('forbidden', `${what} is published and approvals are required: only a publisher, admin or owner may delete what screens play`);
}
