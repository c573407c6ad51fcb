// Structured logs (pino, JSON lines on stdout). Request lines carry the correlation id
// that the client also gets in X-Correlation-Id. Credentials never reach a log line:
// the redaction paths below are a second fence behind code that never logs them.
import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'historian' },
    redact: { paths: ['password', '*.password', 'token', '*.token', 'authorization', '*.authorization', 'cookie', '*.cookie'], censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  }, pino.destination({ sync: false, minLength: 4096 }));
}
