/**
 * The operator's routes in the operation registry (routes.ts assembles the areas): users, credits,
 * agents, any charge, and a disabled agent's money (admin-money.ts). Each entry carries its OpenAPI
 * operation.
 */
import { creditSchema, listAgentsQuerySchema, updateAgentSchema } from '../contracts/request.schemas';
import { adminAgentBody, agentBody, agentListBody, createdUserBody, rotatedUserKeyBody, userBody } from '../contracts/responses/accounts';
import { chargeBody } from '../contracts/responses/charges';
import { refusalText as msg } from '../messages/catalogue';
import { combine, uses } from '../store/access';
import { OPERATOR_MONEY_ROUTES } from './admin-money';
import {
  ADMIN,
  ADMIN_401,
  BODY_ERRORS,
  BUSY,
  EXAMPLE_BALANCES,
  EXAMPLE_CHARGE,
  errors,
  IDEMPOTENCY_ERRORS,
  INVALID_IDEMPOTENCY_KEY,
  invalid,
  LIST_400,
  moneyProblems,
  OPTIONAL_IDEMPOTENCY_ERRORS,
  ok,
  ROTATED_USER_KEY_EXAMPLE,
  UNKNOWN_FIELD,
} from './doc';
import type { DocumentedRoute } from './spec';
import { RELEASE_OPEN_CHARGES } from './tables';

/** The operator (docs/operating/runbooks.md "Admin access"): IAM-authorized on AWS, x-admin-key locally. */
export const ADMIN_ROUTES = [
  // The operator (docs/operating/runbooks.md "Admin access"): IAM-authorized on AWS, x-admin-key locally.
  {
    name: 'admin-create-user',
    method: 'POST',
    path: '/api/v1/admin/users',
    table: uses('createUser', 'idempotentCommand'),
    admin: true,
    sealedAnswers: true,
    operation: () => ({
      summary: 'Create a user',
      description:
        'The user key is shown once. Send an Idempotency-Key to be able to ask for a lost answer again: the same key ' +
        'answers the same user and key for 24 h (the route takes no body, so a key is always the same request).',
      tag: 'Admin',
      security: ADMIN,
      idempotent: 'optional',
      responses: {
        201: ok(
          'Created with zero balances; or, with an Idempotency-Key used before, the first answer again.',
          createdUserBody,
          {
            id: 'u01jhx3k6v1f8q2n7c9m4p5r6s7',
            userKey: 'uk_live_7Hn2QxWbR5tKp9ZsL3vC8mYdE4gF6jA1uBo',
          },
          ['Idempotent-Replayed'],
        ),
        400: errors('The Idempotency-Key is malformed.', [INVALID_IDEMPOTENCY_KEY()]),
        401: ADMIN_401,
        409: OPTIONAL_IDEMPOTENCY_ERRORS[409],
        503: BUSY,
      },
    }),
  },
  {
    name: 'admin-credit-user',
    method: 'POST',
    path: '/api/v1/admin/users/{id}/credits',
    table: uses('getUser', 'idempotentCommand', 'creditUser'),
    admin: true,
    operation: () => ({
      summary: "Credit a user's balance",
      tag: 'Admin',
      security: ADMIN,
      idempotent: true,
      pathParams: { id: 'The user id.' },
      body: { name: 'CreditRequest', schema: creditSchema, example: { amount: 25.5, currency: 'USD' } },
      responses: {
        200: ok(
          'Credited: the balances right after the credit.',
          userBody,
          { id: 'u01jhx3k6v1f8q2n7c9m4p5r6s7', balances: EXAMPLE_BALANCES },
          ['Idempotent-Replayed'],
        ),
        400: errors('Missing Idempotency-Key or an invalid body.', [
          msg('missingIdempotencyKey'),
          msg('invalidJsonBody'),
          ...moneyProblems(creditSchema),
          UNKNOWN_FIELD(),
          msg('creditPastBalanceLimit'),
        ]),
        401: ADMIN_401,
        404: errors('No such user.', [msg('userNotFound')]),
        409: errors(
          'A request with this key is in flight, or the balance kept changing.',
          [msg('idempotencyInProgress'), msg('userBalanceChanging')],
          ['Retry-After'],
        ),
        413: BODY_ERRORS[413],
        415: BODY_ERRORS[415],
        422: IDEMPOTENCY_ERRORS[422],
        503: BUSY,
      },
    }),
  },
  {
    name: 'admin-get-user',
    method: 'GET',
    path: '/api/v1/admin/users/{id}',
    table: uses('getUser'),
    admin: true,
    operation: () => ({
      summary: 'Get a user',
      tag: 'Admin',
      security: ADMIN,
      pathParams: { id: 'The user id.' },
      responses: {
        200: ok('The user and its balances.', userBody, { id: 'u01jhx3k6v1f8q2n7c9m4p5r6s7', balances: EXAMPLE_BALANCES }),
        401: ADMIN_401,
        404: errors('No such user.', [msg('userNotFound')]),
        503: BUSY,
      },
    }),
  },
  // A payer locked out (their key rotated by someone else): the operator hands them a new one.
  {
    name: 'admin-rotate-user-key',
    method: 'POST',
    path: '/api/v1/admin/users/{id}/keys/rotate',
    table: combine(uses('getUserKeyHash', 'rotateUserKey', 'endAccountCredentials', 'endConsoleAccess', 'closeTabs'), RELEASE_OPEN_CHARGES),
    admin: true,
    operation: () => ({
      summary: "Rotate a user's account key",
      description:
        "The operator's way back in for a payer locked out: a new account key, shown once. The old one stops moving money at once. " +
        "It ends what the payer's own rotation ends, console sessions and passkeys added with the account key included.",
      tag: 'Admin',
      security: ADMIN,
      pathParams: { id: 'The user id.' },
      responses: {
        200: ok('The new account key, shown once.', rotatedUserKeyBody, ROTATED_USER_KEY_EXAMPLE),
        401: ADMIN_401,
        404: errors('No such user.', [msg('userNotFound')]),
        409: errors('Rotations kept racing.', [msg('userKeyRotationRaced')]),
        503: BUSY,
      },
    }),
  },
  // Who waits to be enabled (?enabled=false), from an index by state: never a Scan.
  {
    name: 'admin-list-agents',
    method: 'GET',
    path: '/api/v1/admin/agents',
    table: uses('listAgents'),
    admin: true,
    operation: () => ({
      summary: 'List agents',
      description:
        'Agents newest first: `enabled=false` lists those that may not charge (waiting to be enabled after registration, or ' +
        'disabled), `enabled=true` those that may, neither both. Read from an index by state, never a scan; `nextCursor` ' +
        'continues the same list (its limit and filter).',
      tag: 'Admin',
      security: ADMIN,
      query: listAgentsQuerySchema,
      responses: {
        200: ok('A page of agents.', agentListBody, {
          data: [
            {
              id: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
              name: 'weather-bot',
              email: 'dev@example.com',
              website: 'https://example.com',
              enabled: false,
              createdAt: '2026-01-15T09:30:00.000Z',
            },
          ],
          nextCursor: null,
        }),
        400: errors('An invalid query parameter.', [...LIST_400(), invalid(listAgentsQuerySchema, { enabled: 'x' })]),
        401: ADMIN_401,
        503: BUSY,
      },
    }),
  },
  {
    name: 'admin-update-agent',
    method: 'PATCH',
    path: '/api/v1/admin/agents/{id}',
    table: uses('setAgentEnabled'),
    admin: true,
    operation: () => ({
      summary: 'Enable or disable an agent',
      description: "Disabling stops the agent's charges and withdrawals at once, in every container.",
      tag: 'Admin',
      security: ADMIN,
      pathParams: { id: 'The agent id.' },
      body: { name: 'UpdateAgentRequest', schema: updateAgentSchema, example: { enabled: true } },
      responses: {
        200: ok('The agent as it is now.', agentBody, {
          id: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
          name: 'weather-bot',
          email: 'dev@example.com',
          website: 'https://example.com',
          enabled: true,
          createdAt: '2026-01-15T09:30:00.000Z',
        }),
        400: errors('An invalid body.', [
          invalid(updateAgentSchema, {}),
          invalid(updateAgentSchema, { enabled: 'yes' }),
          UNKNOWN_FIELD(),
          msg('invalidJsonBody'),
        ]),
        401: ADMIN_401,
        404: errors('No such agent.', [msg('agentNotFound')]),
        ...BODY_ERRORS,
        503: BUSY,
      },
    }),
  },
  {
    name: 'admin-get-agent',
    method: 'GET',
    path: '/api/v1/admin/agents/{id}',
    table: uses('getAgentById', 'readAgentLedger'),
    admin: true,
    operation: () => ({
      summary: 'Get an agent',
      description: 'The agent and what it has earned and may withdraw.',
      tag: 'Admin',
      security: ADMIN,
      pathParams: { id: 'The agent id.' },
      responses: {
        200: ok('The agent and its balances.', adminAgentBody, {
          id: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
          name: 'weather-bot',
          email: 'dev@example.com',
          website: 'https://example.com',
          enabled: true,
          createdAt: '2026-01-15T09:30:00.000Z',
          balances: EXAMPLE_BALANCES,
        }),
        401: ADMIN_401,
        404: errors('No such agent.', [msg('agentNotFound')]),
        503: BUSY,
      },
    }),
  },
  {
    name: 'admin-get-charge',
    method: 'GET',
    path: '/api/v1/admin/charges/{id}',
    table: uses('getChargeById'),
    admin: true,
    // Shows a settled movement's receipt link (DESIGN §27, on PUBLIC_BASE_URL).
    publicLinks: true,
    operation: () => ({
      summary: "Get any agent's charge",
      tag: 'Admin',
      security: ADMIN,
      pathParams: { id: 'The charge id.' },
      responses: {
        200: ok('The charge.', chargeBody, EXAMPLE_CHARGE),
        401: ADMIN_401,
        404: errors('No such charge.', [msg('chargeNotFound')]),
        503: BUSY,
      },
    }),
  },
  // A disabled agent's money (docs/payouts.md "Held payouts", docs/lifecycle.md): held payouts, its earnings back to its payers.
  ...OPERATOR_MONEY_ROUTES,
] as const satisfies readonly DocumentedRoute[];
