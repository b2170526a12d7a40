/**
 * The payer's top-ups as operations (DESIGN §13, docs/topups.md): open one on a rail, read one,
 * list them. Each is the route's one definition; functions/api/<route>.handler.ts and the console's
 * Add funds page derive from these objects.
 */

import { createTopupSchema, listTopupsQuerySchema } from '../contracts/request.schemas';
import { topupView } from '../contracts/views';
import * as NEEDS from '../registry/needs.generated';
import type { TransactEntry } from '../store/transact';
import { listMyTopups, openTopup, readTopup } from '../use-cases/topups/topups';
import { operation } from './operation';

/** POST /api/v1/users/me/topups: x-user-key; 201 the PENDING top-up with what the payer pays it with. */
export const userCreateTopupOperation = operation({
  route: 'user-create-topup',
  // Refuses to start (fails the init) without the deposit wallet, the mint and PayPal's settings.
  needs: NEEDS.userCreateTopup,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  body: { schema: createTopupSchema },
  run: ({ caller: { userId }, body }) => openTopup(userId, body),
  render: (topup) => ({ statusCode: 201, body: topupView(topup) }),
});

/**
 * Opening a top-up with more items in its transaction: the console's top-up form, whose one-time
 * form record (use-cases/identity/console-forms.ts) joins the top-up's own write, so a double submit opens
 * one top-up. The same operation otherwise: its schema, its use case.
 */
export const userCreateTopupJoining = (also: (view: ReturnType<typeof topupView>) => readonly TransactEntry[]) =>
  operation({
    ...userCreateTopupOperation,
    run: ({ caller: { userId }, body }) => openTopup(userId, body, { also }),
  });

/** GET /api/v1/users/me/topups/{id}: x-user-key. */
export const userGetTopupOperation = operation({
  route: 'user-get-topup',
  needs: NEEDS.userGetTopup,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  run: ({ caller: { userId }, params }) => readTopup(userId, params.id),
  render: (topup) => ({ statusCode: 200, body: topupView(topup) }),
});

/** GET /api/v1/users/me/topups?limit=&cursor=: x-user-key; newest first. */
export const userListTopupsOperation = operation({
  route: 'user-list-topups',
  needs: NEEDS.userListTopups,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  query: listTopupsQuerySchema,
  run: ({ caller: { userId }, query }) => listMyTopups(userId, query),
  render: ({ topups, nextCursor }) => ({ statusCode: 200, body: { data: topups.map(topupView), nextCursor } }),
});
