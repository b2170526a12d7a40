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
import { operation } from './operation';

/** A capture, release or refund's answer: the charge after it (200). */
export const settledChargeAnswer = (charge: Charge) => answerOf(renderSettledCharge(charge));

/** POST /api/v1/agents/charge/{id}/capture: x-agent-key, Idempotency-Key, `{amount?}` (absent or blank: all of the hold). */
export const captureChargeOperation = operation({
  route: 'capture-charge',
  needs: NEEDS.captureCharge,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.lifecycle },
  idempotency: 'required',
  body: { schema: captureChargeSchema, optional: true },
  run: ({ caller: { agent }, idempotencyKey, params, body }) => captureCharge({ agent, chargeId: params.id, idempotencyKey, ...body }),
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
  render: settledChargeAnswer,
});

/** POST /api/v1/agents/charge/{id}/refund: x-agent-key, Idempotency-Key, `{amount?}` (absent or blank: all that is left). */
export const refundChargeOperation = operation({
  route: 'refund-charge',
  needs: NEEDS.refundCharge,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.lifecycle },
  idempotency: 'required',
  body: { schema: refundChargeSchema, optional: true },
  run: ({ caller: { agent }, idempotencyKey, params, body }) => refundCharge({ agent, chargeId: params.id, idempotencyKey, ...body }),
  render: settledChargeAnswer,
});
