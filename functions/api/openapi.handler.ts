import document from '../../docs/openapi.json';
import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.openapi });

// The committed document, serialised once per container (a unit test keeps it equal to what the
// zod schemas generate, so nothing is built from them at cold start).
const text = JSON.stringify(document);

/** GET /api/v1/openapi.json — public. */
export const handler = httpHandler(async () => ({ statusCode: 200, rawBody: text, headers: { 'cache-control': 'public, max-age=300' } }));
