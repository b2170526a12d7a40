/**
 * The charge lifecycle as operations (docs/lifecycle.md): the agent captures or releases its hold,
 * or refunds a charge. Each is a money movement under a required Idempotency-Key; the answer is the
 * charge as it is after it, the very rendering its idempotency record stores.
 */
import { answerOf } from '../contracts/api';
import { captureChargeSchema, refundChargeSchema, releaseChargeSchema } from '../contracts/request.schemas';
import { renderSettledCharge } from '../contracts/settled-outcomes';
import type { Charge } from '../core/charges';
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import { captureCharge, refundCharge, releaseCharge } from '../use-cases/charges/lifecycle';
import { operation, type RenderContext } from './operation';

/** A capture, release or refund's answer: the charge after it (200), its receipt links on the public address. */
export const settledChargeAnswer = (charge: Charge, { baseUrl }: RenderContext) => answerOf(renderSettledCharge(charge, baseUrl));

/** POST /api/v1/agents/charge/{id}/capture: x-agent-key, Idempotency-Key, `{amount?}` (absent or blank: all of the hold). */
export const captureChargeOperation = operation({
  route: 'capture-charge',
  needs: NEEDS.captureCharge,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.lifecycle },
  idempotency: 'required',
  body: { schema: captureChargeSchema, optional: true },
  // The captured charge's receipt link (on PUBLIC_BASE_URL), in the answer and in the one stored under the key.
  links: true,
  run: ({ caller: { agent }, idempotencyKey, params, body, baseUrl }) =>
    captureCharge({ agent, chargeId: params.id, idempotencyKey, baseUrl, ...body }),
  render: settledChargeAnswer,
});

/** POST /api/v1/agents/charge/{id}/release: x-agent-key, Idempotency-Key, no body (or `{}`). */
export const releaseChargeOperation = operation({
  route: 'release-charge',
  needs: NEEDS.releaseCharge,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.lifecycle },
  idempotency: 'required',
  body: { schema: releaseChargeSchema, optional: true },
  run: ({ caller: { agent }, idempotencyKey, params }) => releaseCharge({ agent, chargeId: params.id, idempotencyKey }),
  // A released hold is FAILED: it has no receipt, so its answer links none (and the route makes no links).
  render: (charge) => answerOf(renderSettledCharge(charge, undefined)),
});

/** POST /api/v1/agents/charge/{id}/refund: x-agent-key, Idempotency-Key, `{amount?}` (absent or blank: all that is left). */
export const refundChargeOperation = operation({
  route: 'refund-charge',
  needs: NEEDS.refundCharge,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.lifecycle },
  idempotency: 'required',
  body: { schema: refundChargeSchema, optional: true },
  // The charge's receipt link and its refunds' (refundReceiptUrl, DESIGN §27), on PUBLIC_BASE_URL, stored with the answer.
  links: true,
  run: ({ caller: { agent }, idempotencyKey, params, body, baseUrl }) =>
    refundCharge({ agent, chargeId: params.id, idempotencyKey, baseUrl, ...body }),
  render: settledChargeAnswer,
});
