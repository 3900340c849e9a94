import type { Logger } from 'pino';
import { currentRequest, type RequestScope } from './http/middleware.js';

export interface FaultHandlerOptions {
  logger: Logger;
  /** Resolves when the server can still do its work (main.ts: the database answers). */
  selfCheck: () => Promise<void>;
  /** Ends the process after a fault it should not outlive: a clean stop, exit status 1. */
  stop: (reason: string) => void;
  /** How long the self-check after a fault may take. */
  checkTimeoutMs?: number;
  /** More faults than this within `stormWindowMs` stop the process (something is looping). */
  maxFaults?: number;
  stormWindowMs?: number;
  /** A request a fault happened in that has not answered after this long has its connection closed. */
  requestGraceMs?: number;
}

export const FAULT_DEFAULTS = { checkTimeoutMs: 5_000, maxFaults: 10, stormWindowMs: 60_000, requestGraceMs: 10_000 } as const;

/**
 * The last resort for errors no code caught (docs/operations.md, "Faults"): an
 * `uncaughtException` or an `unhandledRejection` is logged with the request it happened in
 * when Node's async context knows it, and the server stays up, because one bad request must
 * not end every screen's service. Staying up is only safe while the process still works, so
 * each fault is followed by a self-check (the database must answer within
 * `checkTimeoutMs`: a transaction left open by the fault would hold its only connection), and
 * the process stops cleanly (exit 1; systemd restarts it) when the check fails or faults come
 * faster than `maxFaults` per `stormWindowMs`. A request the fault left unanswered has its
 * connection closed after `requestGraceMs`, so its client does not wait forever.
 *
 * Answers a function that removes the handlers.
 */
export function installFaultHandlers(options: FaultHandlerOptions): () => void {
  const { logger, selfCheck, stop } = options;
  const checkTimeoutMs = options.checkTimeoutMs ?? FAULT_DEFAULTS.checkTimeoutMs;
  const maxFaults = options.maxFaults ?? FAULT_DEFAULTS.maxFaults;
  const stormWindowMs = options.stormWindowMs ?? FAULT_DEFAULTS.stormWindowMs;
  const requestGraceMs = options.requestGraceMs ?? FAULT_DEFAULTS.requestGraceMs;
  const recent: number[] = [];
  let checking: Promise<void> | null = null;
  let stopping = false;

  const end = (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.fatal({ reason }, 'stopping after a fault: the process cannot be trusted to go on');
    stop(reason);
  };

  const check = () => {
    if (checking) return; // one self-check at a time: a burst of faults shares it
    checking = (async () => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          selfCheck(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${checkTimeoutMs} ms`)), checkTimeoutMs);
          }),
        ]);
        logger.info('self-check after the fault passed: the server stays up');
      } catch (err) {
        end(`the self-check after a fault failed: ${(err as Error)?.message ?? String(err)}`);
      } finally {
        clearTimeout(timer);
        checking = null;
      }
    })();
  };

  const cutLater = (scope: RequestScope) => {
    const timer = setTimeout(() => {
      const res = scope.res;
      if (!res || res.writableEnded || res.destroyed) return;
      logger.warn({ reqId: scope.id, method: scope.method, path: scope.path }, 'closing the connection of a request a fault left unanswered');
      res.destroy();
    }, requestGraceMs);
    timer.unref();
  };

  const onFault = (kind: 'uncaughtException' | 'unhandledRejection', err: unknown) => {
    const scope = currentRequest();
    const where = scope ? { reqId: scope.id, method: scope.method, path: scope.path } : { outsideRequest: true };
    logger.error({ err, fault: kind, ...where }, `${kind}: an error no code handled${scope ? ` in request ${scope.id}` : ''}`);
    if (stopping) return;
    const now = Date.now();
    recent.push(now);
    while (recent.length && recent[0]! < now - stormWindowMs) recent.shift();
    if (recent.length > maxFaults) return end(`${recent.length} faults within ${stormWindowMs / 1000} s`);
    if (scope) cutLater(scope);
    check();
  };

  const onException = (err: unknown) => onFault('uncaughtException', err);
  const onRejection = (err: unknown) => onFault('unhandledRejection', err);
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
