import pino, { type Logger } from 'pino';

/** Structured JSON logs on stdout (journald keeps them under systemd). */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { app: 'placard' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token', '*.secret'], censor: '[redacted]' },
  });
}
