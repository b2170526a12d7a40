/**
 * The operator's user routes as operations (docs/operator-cli.md): users created, credited and read.
 * Every one takes the operator (IAM, or x-admin-key where the stage takes a key). A module per use
 * case so that each function bundles only its own (operations/README.md); the admin CLI
 * (bin/operator/) runs the same use cases in-process and answers with these renders.
 */
import './operator-credentials';
import { answerOf } from '../contracts/api';
import { creditSchema } from '../contracts/request.schemas';
import { renderCreatedUser, renderCredited } from '../contracts/settled-outcomes';
import { balancesView } from '../contracts/views';
import type { Balances } from '../core/users';
import * as NEEDS from '../registry/needs.generated';
import { createUserByOperator, creditUserBalance, readUser } from '../use-cases/identity/users';
import { operation } from './operation';

const OPERATOR = { kind: 'operator' } as const;

/** A user and its balances (200). */
export const userAnswer = (user: { id: string; balances: Balances }) => ({
  statusCode: 200,
  body: { id: user.id, balances: balancesView(user.balances) },
});

/** POST /api/v1/admin/users: a user with zero balances; the key is returned once (again, to a replay of an optional Idempotency-Key). */
export const adminCreateUserOperation = operation({
  route: 'admin-create-user',
  needs: NEEDS.adminCreateUser,
  credentials: OPERATOR,
  idempotency: 'optional',
  run: ({ idempotencyKey }) => createUserByOperator(idempotencyKey),
  render: (created) => answerOf(renderCreatedUser(created)),
});

/** POST /api/v1/admin/users/{id}/credits: Idempotency-Key, `{amount, currency}`. */
export const adminCreditUserOperation = operation({
  route: 'admin-credit-user',
  needs: NEEDS.adminCreditUser,
  credentials: OPERATOR,
  idempotency: 'required',
  body: { schema: creditSchema },
  run: ({ params, idempotencyKey, body }) => creditUserBalance({ userId: params.id, idempotencyKey, ...body }),
  render: (credited) => answerOf(renderCredited(credited)),
});

/** GET /api/v1/admin/users/{id}. */
export const adminGetUserOperation = operation({
  route: 'admin-get-user',
  needs: NEEDS.adminGetUser,
  credentials: OPERATOR,
  idempotency: 'none',
  run: ({ params }) => readUser(params.id),
  render: userAnswer,
});
