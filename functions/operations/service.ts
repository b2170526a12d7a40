/**
 * The service's own routes as operations (docs/reference/endpoints.md): health. Public: no credentials,
 * no body, no query. The OpenAPI document's route stays a handler (README.md says why).
 */
import * as NEEDS from '../registry/needs.generated';
import { checkHealth } from '../use-cases/health';
import { operation } from './operation';

/** GET /health: 200 when the table answers a strongly consistent read, 503 otherwise. */
export const healthOperation = operation({
  route: 'health',
  needs: NEEDS.health,
  credentials: { kind: 'public' },
  idempotency: 'none',
  run: () => checkHealth(),
  render: (status) => ({ statusCode: 200, body: { status } }),
});
