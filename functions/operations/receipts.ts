/**
 * Receipts as operations (docs/receipts.md): a movement's signed receipt for either party, and the
 * public key set that verifies it. Each is the route's one definition; functions/api/<route>.handler.ts
 * is derived from it.
 */
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import { readReceipt, receiptKeySet } from '../use-cases/receipts/receipts';
import { operation } from './operation';

/** GET /api/v1/receipts/{id}: the agent's x-agent-key or the payer's account key (x-user-key). */
export const getReceiptOperation = operation({
  route: 'get-receipt',
  needs: NEEDS.getReceipt,
  credentials: { kind: 'agentOrPayer', refusal: AUTH_MESSAGES.receipts },
  idempotency: 'none',
  run: ({ caller, params }) => readReceipt('agent' in caller ? { agentId: caller.agent.id } : { userId: caller.userId }, params.id),
  render: (receipt) => ({ statusCode: 200, body: receipt }),
});

/** GET /.well-known/jwks.json: public, and cacheable (it holds public keys only). */
export const jwksOperation = operation({
  route: 'jwks',
  needs: NEEDS.jwks,
  credentials: { kind: 'public' },
  idempotency: 'none',
  run: () => receiptKeySet(),
  render: (set) => ({ statusCode: 200, body: set, headers: { 'cache-control': 'public, max-age=300' } }),
});
