import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { checkHealth } from '../use-cases/health';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.health });

/** GET /health — 200 when the table answers, 503 otherwise. */
export const handler = httpHandler(async () => checkHealth());
