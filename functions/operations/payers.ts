/**
 * The payer's own account as operations (docs/payers.md, DESIGN §11, §16): who they are,
 * their spending policy, the history of charges against them and the decisions on those waiting
 * for them, and the account key's rotation. Each is the route's one definition;
 * functions/api/<route>.handler.ts and the console's forms are derived from these objects.
 */

import './operator-credentials';
import { listUserChargesQuerySchema, policySchema } from '../contracts/request.schemas';
import { chargeView } from '../contracts/views';
import type { Charge } from '../core/charges';
import type { SpendingPolicy } from '../core/policy';
import * as NEEDS from '../registry/needs.generated';
import type { TransactEntry } from '../store/transact';
import { type RotatedAccountKey, rotateMyKey } from '../use-cases/identity/account-key';
import {
  approveCharge,
  declineCharge,
  listMyCharges,
  meView,
  policyView,
  readMe,
  readPolicy,
  releaseMyCharge,
  setPolicy,
  type UserChargePage,
} from '../use-cases/identity/payers';
import { rotateUserKeyByOperator } from '../use-cases/identity/users';
import { operation, type RenderContext } from './operation';

/** A charge as the payer's decision left it (200): approved and SUCCESS, with its receipt link (DESIGN §27). */
const decidedAnswer = (charge: Charge, { baseUrl }: RenderContext) => ({ statusCode: 200, body: chargeView(charge, baseUrl) });
/** A charge the payer declined or released: FAILED, no receipt to link (the route makes no links). */
const endedAnswer = (charge: Charge) => ({ statusCode: 200, body: chargeView(charge, undefined) });
/** The policy as stored (200). */
const policyAnswer = (policy: SpendingPolicy) => ({ statusCode: 200, body: policyView(policy) });
/** A rotation's answer: the new key, shown once, and what it ended (200). */
const rotatedAnswer = (rotated: RotatedAccountKey) => ({ statusCode: 200, body: rotated });

/** GET /api/v1/users/me: x-user-key; balances, held, owed and the policy. */
export const userMeOperation = operation({
  route: 'user-me',
  needs: NEEDS.userMe,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  run: ({ caller: { userId } }) => readMe(userId),
  render: (user) => ({ statusCode: 200, body: meView(user) }),
});

/** GET /api/v1/users/me/policy: x-user-key. */
export const userGetPolicyOperation = operation({
  route: 'user-get-policy',
  needs: NEEDS.userGetPolicy,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  run: ({ caller: { userId } }) => readPolicy(userId),
  render: policyAnswer,
});

/** PUT /api/v1/users/me/policy: x-user-key; the body replaces the whole policy. */
export const userPutPolicyOperation = operation({
  route: 'user-put-policy',
  needs: NEEDS.userPutPolicy,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  body: { schema: policySchema },
  run: ({ caller: { userId }, body }) => setPolicy(userId, body),
  render: policyAnswer,
});

/** GET /api/v1/users/me/charges?limit=&cursor=&status=: x-user-key. */
export const userListChargesOperation = operation({
  route: 'user-list-charges',
  needs: NEEDS.userListCharges,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  query: listUserChargesQuerySchema,
  // PENDING charges that wait for the payer carry their approval links (on PUBLIC_BASE_URL).
  links: true,
  run: ({ caller: { userId }, query, baseUrl }) => listMyCharges(userId, query, baseUrl),
  render: (page: UserChargePage) => ({ statusCode: 200, body: page }),
});

/** POST /api/v1/users/me/charges/{id}/approve: x-user-key. */
export const userApproveChargeOperation = operation({
  route: 'user-approve-charge',
  needs: NEEDS.userApproveCharge,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  // An approved charge is SUCCESS: its receipt link (on PUBLIC_BASE_URL).
  links: true,
  run: ({ caller: { userId }, params }) => approveCharge(userId, params.id),
  render: decidedAnswer,
});

/** POST /api/v1/users/me/charges/{id}/decline: x-user-key. */
export const userDeclineChargeOperation = operation({
  route: 'user-decline-charge',
  needs: NEEDS.userDeclineCharge,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  run: ({ caller: { userId }, params }) => declineCharge(userId, params.id),
  render: endedAnswer,
});

/** POST /api/v1/users/me/charges/{id}/release: x-user-key (the account key): the payer ends an open hold. */
export const userReleaseChargeOperation = operation({
  route: 'user-release-charge',
  needs: NEEDS.userReleaseCharge,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  run: ({ caller: { userId }, params }) => releaseMyCharge(userId, params.id),
  render: endedAnswer,
});

/** POST /api/v1/users/me/keys/rotate: x-user-key; answers the new key once. */
export const userRotateKeyOperation = operation({
  route: 'user-rotate-key',
  needs: NEEDS.userRotateKey,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  run: ({ caller: { userId, userKeyHash } }) => rotateMyKey(userId, userKeyHash),
  render: rotatedAnswer,
});

/**
 * The payer's rotation with more items in its transaction: the console's `Rotate key`, whose
 * one-time form record (use-cases/identity/console-forms.ts) joins the rotation's own write, so a double
 * submit rotates once. The same operation otherwise: its credentials' caller, its use case.
 */
export const userRotateKeyJoining = (also: readonly TransactEntry[]) =>
  operation({
    ...userRotateKeyOperation,
    run: ({ caller: { userId, userKeyHash } }) => rotateMyKey(userId, userKeyHash, { also }),
  });

/** POST /api/v1/admin/users/{id}/keys/rotate: the operator (IAM or x-admin-key); answers the new account key once. */
export const adminRotateUserKeyOperation = operation({
  route: 'admin-rotate-user-key',
  needs: NEEDS.adminRotateUserKey,
  credentials: { kind: 'operator' },
  idempotency: 'none',
  run: ({ params }) => rotateUserKeyByOperator(params.id),
  render: rotatedAnswer,
});
