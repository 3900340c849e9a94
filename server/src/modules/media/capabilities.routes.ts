import { z } from 'zod';
import { defineRoute, ok } from '../../platform/http/route.js';
import { uploadLimits } from './limits.js';
import { ACCEPTED, EXTENSIONS } from '../../platform/media/sniff.js';
import { TUS_CHECKSUM_ALGORITHMS, TUS_EXTENSIONS, TUS_VERSION } from '../../platform/http/tus.js';

const Capability = z.object({ available: z.boolean(), detail: z.string() });

/** What this server's media library can do, for the console (e.g. "PDF unavailable: install poppler-utils"). */
export const capabilityRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/media/capabilities',
    auth: 'session',
    minRole: 'viewer',
    extension: true,
    tags: ['Uploads'],
    summary: 'Media features available on this server, upload limits and tus details',
    responses: {
      200: {
        description: 'Capabilities',
        data: z.object({
          maxUploadBytes: z.number().int().describe('The effective limit: min(PLACARD_UPLOAD_MAX_BYTES, settings uploads.maxSizeBytes)'),
          maxUploadBytesHardCap: z.number().int().describe('PLACARD_UPLOAD_MAX_BYTES: the setting cannot raise the limit above this'),
          uploadExpiryMs: z
            .number()
            .int()
            .describe('A partial upload untouched this long is discarded: min(PLACARD_UPLOAD_EXPIRY_HOURS, settings uploads.abandonAfterHours)'),
          imageMaxPixels: z.number().int(),
          tus: z.object({ version: z.string(), extensions: z.array(z.string()), checksumAlgorithms: z.array(z.string()) }),
          kinds: z.object({ image: Capability, video: Capability, audio: Capability, pdf: Capability, website: Capability }),
          accepted: z
            .array(
              z.object({ contentType: z.string(), kind: z.enum(['image', 'video', 'audio', 'pdf']), extensions: z.array(z.string()), available: z.boolean() }),
            )
            .describe(
              'The file types an upload may be (decided from the bytes when it completes); `available` is false when the kind cannot be processed on this server (e.g. PDF without poppler)',
            ),
        }),
      },
    },
    handler: async (ctx) => {
      const { config, tools } = ctx.deps;
      const [status, av, pdf, limits] = await Promise.all([tools.check(), tools.av(), tools.pdf(), uploadLimits(ctx.deps)]);
      const kinds = {
        image: { available: status.sharp.ok, detail: status.sharp.detail },
        video: av,
        audio: av,
        pdf,
        website: { available: true, detail: 'shown in a frame by players' },
      };
      return ok({
        accepted: Object.entries(ACCEPTED).map(([contentType, kind]) => ({
          contentType,
          kind,
          extensions: [...(EXTENSIONS[contentType] ?? [])],
          available: kinds[kind].available,
        })),
        maxUploadBytes: limits.maxBytes,
        maxUploadBytesHardCap: limits.hardCapBytes,
        uploadExpiryMs: limits.expiryMs,
        imageMaxPixels: config.imageMaxPixels,
        tus: { version: TUS_VERSION, extensions: TUS_EXTENSIONS.split(','), checksumAlgorithms: [...TUS_CHECKSUM_ALGORITHMS] },
        kinds,
      });
    },
  }),
];
