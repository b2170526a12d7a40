/**
 * Tabs in the operation registry (DESIGN §29, docs/tabs.md): the agent opens, uses, reads and
 * closes a tab; the payer lists and closes theirs. agents.ts and users.ts put them in their API.
 * Each entry carries its OpenAPI operation; adding a route: docs/registry.md.
 */

import { pendingTabBody, tabBody, tabUsageBody, tabUsageListBody, userTabListBody } from '../contracts/responses/tabs';
import { closeTabSchema, listTabUsageQuerySchema, listUserTabsQuerySchema, openTabSchema, tabUsageSchema } from '../contracts/tab.schemas';
import { refusalText as msg } from '../messages/catalogue';
import { AUTH_MESSAGES } from '../messages/credentials';
import { combine, uses } from '../store/access';
import {
  amountProblem,
  BODY_ERRORS,
  BUSY,
  errors,
  IDEMPOTENCY_ERRORS,
  invalid,
  LIFECYCLE_400,
  LIST_400,
  num,
  ok,
  UNKNOWN_FIELD,
  USER_401,
} from './doc';
import type { DocumentedRoute } from './spec';
import { CHARGE, USER } from './tables';

const TAB_ID = 't01jhx3k6v1f8q2n7c9m4p5r6s7a01jhx2z9e4w7q1m3v8b6n5k2d0';

const EXAMPLE_TAB = {
  id: TAB_ID,
  status: 'OPEN',
  currency: 'USD',
  limit: 5,
  used: 0,
  usageCount: 0,
  grantId: null,
  expiresAt: '2026-01-15T10:30:00.000Z',
  createdAt: '2026-01-15T09:30:00.000Z',
  chargeId: 'c01jhx3k6v1f8q2n7c9m4p5r6s8a01jhx2z9e4w7q1m3v8b6n5k2d0',
  closedAt: null,
  closedBy: null,
};

const EXAMPLE_USAGE = { tabId: TAB_ID, usageId: 'tu01jhx3k6v1f8q2n7c9m4p5r6s9', amount: 0.0123, used: 0.0123, remaining: 4.9877 };

const EXAMPLE_CLOSED = {
  ...EXAMPLE_TAB,
  status: 'CLOSED',
  used: 1.37,
  usageCount: 112,
  closedAt: '2026-01-15T09:58:00.000Z',
  closedBy: 'agent',
};

const TAB_401 = errors('The agent key is unknown or disabled.', [msg(AUTH_MESSAGES.lifecycle)]);
const TAB_404 = errors("No such tab, or another agent's.", [msg('tabNotFound')]);
const OPEN_BODY = { currency: 'USD', limit: num('5') };

/** Opening holds what a hold would (the charge's grant); a use writes the tab's partition only. */
const OPEN_TAB = combine(CHARGE, uses('commitTabOpening'));
const READ_TAB = uses('agentKeyLookup', 'getTab');
const USE_TAB = uses('agentKeyLookup', 'getTab', 'commitTabUsage');
const CLOSE_TAB = uses('getTab', 'getPendingCharge', 'chargeBeforeSettling', 'settleTab');

/** The agent's tabs. */
export const AGENT_TAB_ROUTES = [
  {
    name: 'agent-open-tab',
    method: 'POST',
    path: '/api/v1/agents/tabs',
    table: OPEN_TAB,
    approvalSecret: true,
    publicLinks: true,
    operation: () => ({
      summary: 'Open a tab',
      description:
        "Holds `limit` of the payer's balance exactly as a hold (`capture: false`) would, through the grant and the policy " +
        '(the same refusals, in the same order, each keeping a FAILED charge), for `ttlSeconds` (60 to 86400, default 3600). ' +
        "Above the payer's approval threshold it answers 202 PENDING_APPROVAL and opens once the payer approves. Uses then " +
        'cost one small write each; the close captures what was used (docs/tabs.md). Stored under the Idempotency-Key for 24 h.',
      tag: 'Charges',
      security: [['agentKey', 'userKey']],
      idempotent: true,
      body: {
        name: 'OpenTabRequest',
        schema: openTabSchema,
        example: { currency: 'USD', limit: 5, description: 'tokens', ttlSeconds: 3600 },
      },
      responses: {
        201: ok('Open: `limit` is held.', tabBody, EXAMPLE_TAB, ['Idempotent-Replayed']),
        202: ok(
          "Above the payer's approval threshold: PENDING_APPROVAL, `limit` held until the payer approves (or the approval expires).",
          pendingTabBody,
          { ...EXAMPLE_TAB, status: 'PENDING_APPROVAL', approvalUrl: null },
          ['Idempotent-Replayed'],
        ),
        400: errors('Missing Idempotency-Key or an invalid body.', [
          ...LIFECYCLE_400,
          invalid(openTabSchema, { currency: 'USD' }),
          amountProblem('1.001', 'USD', 'limit'),
          amountProblem('0', 'USD', 'limit'),
          invalid(openTabSchema, { ...OPEN_BODY, ttlSeconds: num('59') }),
          invalid(openTabSchema, { ...OPEN_BODY, ttlSeconds: num('86401') }),
          UNKNOWN_FIELD(),
        ]),
        401: errors('The agent key or the user key is unknown, disabled or revoked.', [
          msg(AUTH_MESSAGES.createCharge),
          msg(AUTH_MESSAGES.user),
        ]),
        402: errors('Over a spending limit, or not enough funds; a FAILED charge is kept.', [
          msg('spendingLimitExceeded'),
          msg('insufficientBalance'),
        ]),
        403: errors('The payer has blocked this agent; a FAILED charge is kept.', [msg('agentBlockedByUser')]),
        ...BODY_ERRORS,
        409: IDEMPOTENCY_ERRORS[409],
        422: IDEMPOTENCY_ERRORS[422],
        503: BUSY,
      },
    }),
  },
  {
    name: 'agent-use-tab',
    method: 'POST',
    path: '/api/v1/agents/tabs/{id}/usage',
    table: USE_TAB,
    operation: () => ({
      summary: 'Use a tab',
      description:
        "Adds `amount` to what the tab used, never past its limit: one write request of the tab's own partition, no read on a " +
        "warm container, nothing of the payer's or the agent's balance. A refusal changes nothing. The same Idempotency-Key " +
        'again answers the first use; another body under it is 422.',
      tag: 'Charges',
      security: [['agentKey']],
      idempotent: true,
      pathParams: { id: 'The tab id.' },
      body: { name: 'TabUsageRequest', schema: tabUsageSchema, example: { amount: 0.0123, description: '1234 tokens' } },
      responses: {
        200: ok('Used.', tabUsageBody, EXAMPLE_USAGE, ['Idempotent-Replayed']),
        400: errors("Missing Idempotency-Key, an invalid body, or an amount the tab's currency cannot take exactly.", [
          ...LIFECYCLE_400,
          invalid(tabUsageSchema, {}),
          invalid(tabUsageSchema, { amount: '1' }),
          amountProblem('0', 'USD'),
          amountProblem('0.001', 'USD'),
          UNKNOWN_FIELD(),
        ]),
        401: TAB_401,
        404: TAB_404,
        409: errors(
          'Over the limit, not open (waiting for approval, closed, past expiresAt), or a request with this key in flight.',
          [msg('tabLimitExceeded'), msg('tabNotOpen'), msg('idempotencyInProgress')],
          ['Retry-After'],
        ),
        ...BODY_ERRORS,
        422: IDEMPOTENCY_ERRORS[422],
        503: BUSY,
      },
    }),
  },
  {
    name: 'agent-get-tab',
    method: 'GET',
    path: '/api/v1/agents/tabs/{id}',
    table: READ_TAB,
    operation: () => ({
      summary: 'Get a tab',
      description: 'The tab as it is now.',
      tag: 'Charges',
      security: [['agentKey']],
      pathParams: { id: 'The tab id.' },
      responses: { 200: ok('The tab.', tabBody, EXAMPLE_TAB), 401: TAB_401, 404: TAB_404, 503: BUSY },
    }),
  },
  {
    name: 'agent-list-tab-usage',
    method: 'GET',
    path: '/api/v1/agents/tabs/{id}/usage',
    table: READ_TAB,
    operation: () => ({
      summary: "A tab's uses",
      description:
        'In the order of their Idempotency-Keys (each carries its time-ordered `usageId` and `createdAt`); `nextCursor` for the next page.',
      tag: 'Charges',
      security: [['agentKey']],
      pathParams: { id: 'The tab id.' },
      query: listTabUsageQuerySchema,
      responses: {
        200: ok('A page of uses.', tabUsageListBody, {
          data: [{ ...EXAMPLE_USAGE, description: '1234 tokens', createdAt: '2026-01-15T09:31:00.000Z' }],
          nextCursor: null,
        }),
        400: errors('An invalid query parameter.', LIST_400()),
        401: TAB_401,
        404: TAB_404,
        503: BUSY,
      },
    }),
  },
  {
    name: 'agent-close-tab',
    method: 'POST',
    path: '/api/v1/agents/tabs/{id}/close',
    table: combine(READ_TAB, CLOSE_TAB),
    operation: () => ({
      summary: 'Close a tab',
      description:
        'CLOSED: what was used is captured as one charge (`type: "tab"`, credited to the agent as a capture is) and the rest of ' +
        'the hold goes back to the payer, in one transaction. A closed tab answers as it is.',
      tag: 'Charges',
      security: [['agentKey']],
      pathParams: { id: 'The tab id.' },
      body: { name: 'CloseTabRequest', schema: closeTabSchema, example: {} },
      responses: {
        200: ok('Closed.', tabBody, EXAMPLE_CLOSED),
        400: errors('An invalid body.', [msg('invalidJsonBody'), UNKNOWN_FIELD()]),
        401: TAB_401,
        404: TAB_404,
        409: errors('The tab kept being used while it closed; retry.', [msg('idempotencyInProgress')], ['Retry-After']),
        ...BODY_ERRORS,
        503: BUSY,
      },
    }),
  },
] as const satisfies readonly DocumentedRoute[];

/** The payer's tabs. */
export const USER_TAB_ROUTES = [
  {
    name: 'user-list-tabs',
    method: 'GET',
    path: '/api/v1/users/me/tabs',
    table: combine(USER, uses('listUserTabs')),
    operation: () => ({
      summary: "The payer's tabs",
      description: 'Every tab against this payer, of every agent and status, newest first, with what each holds and has used.',
      tag: 'Users',
      security: [['userKey']],
      query: listUserTabsQuerySchema,
      responses: {
        200: ok('A page of tabs.', userTabListBody, {
          data: [{ ...EXAMPLE_TAB, description: 'tokens', agent: { id: 'a01jhx2z9e4w7q1m3v8b6n5k2d0', name: 'summariser' }, held: 5 }],
          nextCursor: null,
        }),
        400: errors('An invalid query parameter.', [...LIST_400(), invalid(listUserTabsQuerySchema, { status: 'DONE' })]),
        401: USER_401,
        503: BUSY,
      },
    }),
  },
  {
    name: 'user-close-tab',
    method: 'POST',
    path: '/api/v1/users/me/tabs/{id}/close',
    table: combine(USER, CLOSE_TAB),
    operation: () => ({
      summary: 'Close a tab',
      description: 'The payer ends a tab of theirs: what was used is captured, the rest of the hold comes back, in one transaction.',
      tag: 'Users',
      security: [['userKey']],
      pathParams: { id: 'The tab id.' },
      body: { name: 'CloseTabRequest', schema: closeTabSchema, example: {} },
      responses: {
        200: ok('Closed.', tabBody, { ...EXAMPLE_CLOSED, closedBy: 'payer' }),
        400: errors('An invalid body.', [msg('invalidJsonBody'), UNKNOWN_FIELD()]),
        401: USER_401,
        404: errors('No such tab of this payer.', [msg('tabNotFound')]),
        409: errors('The tab kept being used while it closed; retry.', [msg('idempotencyInProgress')], ['Retry-After']),
        ...BODY_ERRORS,
        503: BUSY,
      },
    }),
  },
] as const satisfies readonly DocumentedRoute[];
