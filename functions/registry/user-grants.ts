/**
 * The payer's grants in the operation registry (users.ts puts them in the payer's API): a grant made
 * with the account key, listed, read and revoked (docs/grants.md). Each entry carries its OpenAPI
 * operation; adding a route: docs/registry.md.
 */
import { createGrantSchema, listGrantsQuerySchema } from '../contracts/grants';
import { createdGrantBody, grantBody, grantListBody } from '../contracts/responses/grants';
import { MAX_ACTIVE_GRANTS } from '../core/grants';
import { refusalText as msg } from '../messages/catalogue';
import { combine, uses } from '../store/access';
import {
  amountProblem,
  BODY_ERRORS,
  BUSY,
  EXAMPLE_GRANT,
  errors,
  INVALID_IDEMPOTENCY_KEY,
  invalid,
  LIST_400,
  num,
  OPTIONAL_IDEMPOTENCY_ERRORS,
  ok,
  USER_401,
} from './doc';
import type { DocumentedRoute } from './spec';
import { ISSUE_GRANT, USER } from './tables';

/** A payer's grants, by the account key. */
export const USER_GRANT_ROUTES = [
  // Grants (docs/grants.md): the account key issues, lists, reads and revokes agents' grant keys.
  {
    name: 'user-create-grant',
    method: 'POST',
    path: '/api/v1/users/me/grants',
    table: combine(USER, ISSUE_GRANT, uses('idempotentCommand')),
    sealedAnswers: true,
    operation: () => ({
      summary: 'Give an agent a grant',
      description:
        'A scoped charge credential for one agent and one currency: the agent sends its `key` as x-user-key on its charges, ' +
        'never the account key. Limits (per charge, per UTC day and month, lifetime `total`), an approval threshold, a lifetime ' +
        'a `scope` (payees and hosts its x402 purchases may go to), and a description. At most 100 active grants per payer. Send an Idempotency-Key to be able to ask for a lost answer ' +
        'again: the same key and terms answer the same grant and key for 24 h, and never make a second grant.',
      tag: 'Users',
      security: [['userKey']],
      idempotent: 'optional',
      body: {
        name: 'CreateGrantRequest',
        schema: createGrantSchema,
        example: {
          agentId: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
          currency: 'USD',
          limits: { perCharge: 5, total: 20 },
          approvalAbove: 2,
          ttlSeconds: 86400,
        },
      },
      responses: {
        201: ok(
          'The grant, with its key shown this once (and again to a replay of its Idempotency-Key).',
          createdGrantBody,
          {
            ...EXAMPLE_GRANT,
            key: 'ug_live_3Jc7QxWbR5tKp9ZsL3vC8mYdE4gF6jA1uBo',
          },
          ['Idempotent-Replayed'],
        ),
        400: errors('An invalid field, an unknown agent, or a malformed Idempotency-Key.', [
          msg('grantAgentNotFound'),
          invalid(createGrantSchema, { agentId: 'x', currency: 'USD' }),
          invalid(createGrantSchema, { agentId: EXAMPLE_GRANT.agent.id, currency: 'USD', ttlSeconds: num('59') }),
          amountProblem('1.001', 'USD', 'limits.total'),
          invalid(createGrantSchema, { agentId: EXAMPLE_GRANT.agent.id, currency: 'USDC', scope: { hosts: ['api.example.com:8443'] } }),
          INVALID_IDEMPOTENCY_KEY(),
        ]),
        401: USER_401,
        409: errors(
          'The payer has 100 active grants, or a request with this Idempotency-Key is still in flight.',
          [msg('grantLimit', MAX_ACTIVE_GRANTS), msg('idempotencyInProgress')],
          ['Retry-After'],
        ),
        ...BODY_ERRORS,
        422: OPTIONAL_IDEMPOTENCY_ERRORS[422],
        503: BUSY,
      },
    }),
  },
  {
    name: 'user-list-grants',
    method: 'GET',
    path: '/api/v1/users/me/grants',
    table: uses('userKeyLookup', 'listGrants'),
    operation: () => ({
      summary: "The payer's grants",
      description: 'Newest first; `status` filters (a filtered page may hold fewer than `limit` and still a `nextCursor`).',
      tag: 'Users',
      security: [['userKey']],
      query: listGrantsQuerySchema,
      responses: {
        200: ok('A page of grants.', grantListBody, { data: [EXAMPLE_GRANT], nextCursor: null }),
        400: errors('An invalid query parameter.', [...LIST_400(), invalid(listGrantsQuerySchema, { status: 'x' })]),
        401: USER_401,
        503: BUSY,
      },
    }),
  },
  {
    name: 'user-get-grant',
    method: 'GET',
    path: '/api/v1/users/me/grants/{id}',
    table: uses('userKeyLookup', 'getGrant'),
    operation: () => ({
      summary: 'One grant',
      tag: 'Users',
      security: [['userKey']],
      pathParams: { id: 'The grant id.' },
      responses: {
        200: ok('The grant (never its key).', grantBody, EXAMPLE_GRANT),
        401: USER_401,
        404: errors("No such grant, or another payer's.", [msg('grantNotFound')]),
        503: BUSY,
      },
    }),
  },
  {
    name: 'user-revoke-grant',
    method: 'DELETE',
    path: '/api/v1/users/me/grants/{id}',
    table: uses('userKeyLookup', 'revokeGrant', 'closeTabs'),
    operation: () => ({
      summary: 'Revoke a grant',
      description:
        'Every charge with its key is refused from now on, and the tabs opened under it close at what they used (the rest of their holds back). ' +
        'Revoking a revoked grant answers the same 200, closing any of its tabs still open.',
      tag: 'Users',
      security: [['userKey']],
      pathParams: { id: 'The grant id.' },
      responses: {
        200: ok('The grant, revoked.', grantBody, { ...EXAMPLE_GRANT, status: 'revoked', revokedAt: '2026-01-15T10:00:00.000Z' }),
        401: USER_401,
        404: errors("No such grant, or another payer's.", [msg('grantNotFound')]),
        409: errors('The grant kept changing under the revocation.', [msg('grantChanging')]),
        503: BUSY,
      },
    }),
  },
] as const satisfies readonly DocumentedRoute[];
