import { Writable } from 'node:stream';
import winston from 'winston';
import type { Logger } from '../../../src/log.js';

/** A logger whose records (message and fields) collect in `records`. */
export function memoryLogger(): { logger: Logger; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const stream = new Writable({
    objectMode: true,
    write(info: Record<string, unknown>, _encoding, done) {
      records.push(info);
      done();
    },
  });
  return {
    logger: winston.createLogger({ level: 'debug', transports: [new winston.transports.Stream({ stream })] }),
    records,
  };
}
