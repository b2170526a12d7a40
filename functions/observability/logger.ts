import { Logger } from '@aws-lambda-powertools/logger';
import { config } from '../config';

let instance: Logger | undefined;

/** Structured JSON logger (Powertools). Never given a key, a header map or a raw body. */
export function logger(): Logger {
  if (!instance) {
    const level = config().LOG_LEVEL;
    instance = new Logger({ serviceName: 'agent-payment-service', logLevel: level, persistentKeys: { stage: config().STAGE } });
  }
  return instance;
}
