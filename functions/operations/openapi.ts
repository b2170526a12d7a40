/**
 * GET /api/v1/openapi.json as an operation: public, it serves the committed document (a unit test
 * keeps it equal to what the zod schemas generate, so nothing is built from them at cold start).
 * Apart from the other service routes so that only this bundle carries the document.
 */
import document from '../../docs/openapi.json';
import * as NEEDS from '../registry/needs.generated';
import { operation } from './operation';

// Serialised once per container.
const text = JSON.stringify(document);

/** GET /api/v1/openapi.json: public; the document's text as committed, cacheable for 5 minutes. */
export const openapiOperation = operation({
  route: 'openapi',
  needs: NEEDS.openapi,
  credentials: { kind: 'public' },
  idempotency: 'none',
  run: async () => text,
  render: (body) => ({ statusCode: 200, rawBody: body, headers: { 'cache-control': 'public, max-age=300' } }),
});
