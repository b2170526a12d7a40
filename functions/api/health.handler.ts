import { httpHandler } from '../http/handler';
import { checkHealth } from '../use-cases/health';

/** GET /health — 200 when the table answers, 503 otherwise. */
export const handler = httpHandler(async () => checkHealth());
