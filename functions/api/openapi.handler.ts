import document from '../../docs/openapi.json';
import { httpHandler } from '../http/handler';

// The committed document, serialised once per container (a unit test keeps it equal to what the
// zod schemas generate, so nothing is built from them at cold start).
const text = JSON.stringify(document);

/** GET /api/v1/openapi.json — public. */
export const handler = httpHandler(async () => ({ statusCode: 200, rawBody: text, headers: { 'cache-control': 'public, max-age=300' } }));
