/**
 * The operator's held-payout routes as operations (docs/payouts.md "Held payouts"): listed, released or cancelled.
 * Every one takes the operator (IAM, or x-admin-key where the stage takes a key). A module per use
 * case so that each function bundles only its own (operations/README.md); the admin CLI
 * (bin/operator/) runs the same use cases in-process and answers with these renders.
 */
import './operator-credentials';
import { answerOf } from '../contracts/api';
import { adminListPayoutsQuerySchema, releaseChargeSchema } from '../contracts/request.schemas';
import { renderPayout } from '../contracts/settled-outcomes';
import { payoutView } from '../contracts/views';
import type { Payout } from '../core/payouts';
import * as NEEDS from '../registry/needs.generated';
import { cancelPayout, listPayoutsForOperator, releasePayout } from '../use-cases/payouts/payout-holds';
import { operation, type RenderContext } from './operation';

const OPERATOR = { kind: 'operator' } as const;

/** A payout as it is now (200). */
export const payoutAnswer = (payout: Payout) => answerOf(renderPayout(payout));

/** A page of payouts (200). */
export const payoutPageAnswer = (page: { payouts: Payout[]; nextCursor: string | null }, { baseUrl }: RenderContext) => ({
  statusCode: 200,
  body: { payouts: page.payouts.map((p) => payoutView(p, baseUrl)), nextCursor: page.nextCursor },
});

/** GET /api/v1/admin/payouts?status=HELD&limit=&cursor=: held payouts, oldest first. */
export const adminListPayoutsOperation = operation({
  route: 'admin-list-payouts',
  needs: NEEDS.adminListPayouts,
  credentials: OPERATOR,
  idempotency: 'none',
  query: adminListPayoutsQuerySchema,
  // A COMPLETED payout's receipt link, as its agent's list shows it (the agent reads it; the operator is no party).
  links: true,
  run: ({ query }) => listPayoutsForOperator(query),
  render: payoutPageAnswer,
});

/** POST /api/v1/admin/agents/{id}/payouts/{payoutId}/release: no body (or `{}`). */
export const adminReleasePayoutOperation = operation({
  route: 'admin-release-payout',
  needs: NEEDS.adminReleasePayout,
  credentials: OPERATOR,
  idempotency: 'none',
  body: { schema: releaseChargeSchema, optional: true },
  run: ({ params }) => releasePayout(params.id, params.payoutId),
  render: payoutAnswer,
});

/** POST /api/v1/admin/agents/{id}/payouts/{payoutId}/cancel: Idempotency-Key, no body (or `{}`). */
export const adminCancelPayoutOperation = operation({
  route: 'admin-cancel-payout',
  needs: NEEDS.adminCancelPayout,
  credentials: OPERATOR,
  idempotency: 'required',
  body: { schema: releaseChargeSchema, optional: true },
  run: ({ params, idempotencyKey }) => cancelPayout({ agentId: params.id, payoutId: params.payoutId, idempotencyKey }),
  render: payoutAnswer,
});
