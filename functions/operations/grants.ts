/**
 * The payer's grants as operations (DESIGN §16, docs/grants.md): created with the account key (the
 * grant key shown once, in the create answer and a replay of it), listed, read and revoked. Each is
 * the route's one definition; functions/api/<route>.handler.ts and the console's forms derive from it.
 */
import { answerOf } from '../contracts/api';
import { createGrantSchema, grantView, listGrantsQuerySchema, renderIssuedGrant } from '../contracts/grants';
import type { Grant } from '../core/grants';
import * as NEEDS from '../registry/needs.generated';
import { createGrantForPayer, listGrantsPage, readGrant, revokeMyGrant } from '../use-cases/identity/grants';
import { operation } from './operation';

/** A grant as the API shows it (200). */
const grantAnswer = (grant: Grant) => ({ statusCode: 200, body: grantView(grant) });

/** POST /api/v1/users/me/grants: the account key, an optional Idempotency-Key; answers the Grant and its key, shown once (and to a replay). */
export const userCreateGrantOperation = operation({
  route: 'user-create-grant',
  needs: NEEDS.userCreateGrant,
  credentials: { kind: 'payer' },
  idempotency: 'optional',
  body: { schema: createGrantSchema },
  run: ({ caller: { userId, userKeyHash }, idempotencyKey, body }) =>
    createGrantForPayer({ userId, accountKeyHash: userKeyHash }, body, idempotencyKey),
  render: (created) => answerOf(renderIssuedGrant(created)),
});

/** GET /api/v1/users/me/grants/{id}: the account key. */
export const userGetGrantOperation = operation({
  route: 'user-get-grant',
  needs: NEEDS.userGetGrant,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  run: ({ caller: { userId }, params }) => readGrant(userId, params.id),
  render: grantAnswer,
});

/** GET /api/v1/users/me/grants?limit=&cursor=&status=: the account key; newest first. */
export const userListGrantsOperation = operation({
  route: 'user-list-grants',
  needs: NEEDS.userListGrants,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  query: listGrantsQuerySchema,
  run: ({ caller: { userId }, query }) => listGrantsPage(userId, query),
  render: ({ grants, nextCursor }) => {
    const now = new Date();
    return { statusCode: 200, body: { data: grants.map((g) => grantView(g, now)), nextCursor } };
  },
});

/** DELETE /api/v1/users/me/grants/{id}: the account key; 200 the Grant, revoked (again: the same). */
export const userRevokeGrantOperation = operation({
  route: 'user-revoke-grant',
  needs: NEEDS.userRevokeGrant,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  run: ({ caller: { userId }, params }) => revokeMyGrant(userId, params.id),
  render: grantAnswer,
});
