/**
 * The agent's API in the operation registry (routes.ts assembles the areas): registration, charges and
 * their lifecycle (capture, release, refund; in agent-charges.ts), its balance and withdrawals, its key. Each entry carries
 * its OpenAPI operation; adding a route: docs/registry.md.
 */
import { listWithdrawalsQuerySchema, registerAgentSchema, withdrawSchema } from '../contracts/request.schemas';
import { component } from '../contracts/response.schemas';
import { agentBalanceBody, registeredAgentBody, rotatedAgentKeyBody } from '../contracts/responses/accounts';
import { payoutBody, payoutListBody, withdrawalBody } from '../contracts/responses/payouts';
import { REGISTRATION_MESSAGE } from '../core/agents';
import { refusalText as msg } from '../messages/catalogue';
import { AUTH_MESSAGES } from '../messages/credentials';
import { uses } from '../store/access';
import { AGENT_CHARGE_ROUTES, CHARGE_LIFECYCLE_ROUTES } from './agent-charges';
import {
  amountProblem,
  BODY_ERRORS,
  BUSY,
  EXAMPLE_PAYOUT,
  errors,
  IDEMPOTENCY_ERRORS,
  INVALID_IDEMPOTENCY_KEY,
  invalid,
  LIST_400,
  num,
  OPTIONAL_IDEMPOTENCY_ERRORS,
  ok,
  UNKNOWN_FIELD,
  WALLET,
} from './doc';
import type { DocumentedRoute } from './spec';
import { BALANCE, LIST_WITHDRAWALS, WITHDRAW } from './tables';

/** The answers of a withdrawal: a plain one, and one that created the wallet's token account. */
const WITHDRAWAL_EXAMPLES = {
  example: {
    success: true,
    payoutId: 'p01jhx3k6v1f8q2n7c9m4p5r6s7',
    breakdown: {
      grossAmount: 10,
      platformFeeRate: '3%',
      platformFee: 0.3,
      netAmount: 9.7,
      currency: 'USDC',
      walletAddress: WALLET,
      network: 'SOL',
    },
  },
  createTokenAccount: {
    success: true,
    payoutId: 'p01jhx3k6v1f8q2n7c9m4p5r6s8',
    breakdown: {
      grossAmount: 10,
      platformFeeRate: '3%',
      platformFee: 0.3,
      accountCreationFee: 0.5,
      netAmount: 9.2,
      currency: 'USDC',
      walletAddress: WALLET,
      network: 'SOL',
    },
  },
};

/** The agent's API: registration, charges and their lifecycle, its balance and withdrawals, its key. */
export const AGENT_ROUTES = [
  {
    name: 'register-agent',
    method: 'POST',
    path: '/api/v1/agents/register',
    public: true,
    table: uses('createAgent', 'idempotentCommand'),
    sealedAnswers: true,
    operation: () => ({
      summary: 'Register an agent',
      description:
        'No authentication. The agent starts disabled until an operator enables it; its key is shown once. Send an ' +
        'Idempotency-Key (a random UUID) to be able to ask for a lost answer again: the same key and the same body answer ' +
        'the same agent and key for 24 h. Registration has no caller to scope the key to, so the key and the body are the ' +
        'proof: keep the key as secret as the agent key it can recover.',
      tag: 'Agents',
      security: [],
      idempotent: 'optional',
      body: {
        name: 'RegisterAgentRequest',
        schema: registerAgentSchema,
        example: { name: 'weather-bot', email: 'dev@example.com', website: 'https://example.com' },
      },
      responses: {
        201: ok(
          'Registered (disabled); or, with an Idempotency-Key used before with this body, the first answer again.',
          registeredAgentBody,
          {
            message: REGISTRATION_MESSAGE,
            apiKey: 'ag_live_4Kq9GmYp7VwXz3RtN8bH2cJdLfE6sA5uQ1oPiU',
            enabled: false,
            agentId: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
          },
          ['Idempotent-Replayed'],
        ),
        400: errors('The field named is missing or invalid, the body is not a JSON object, or the Idempotency-Key is malformed.', [
          invalid(registerAgentSchema, { email: 'dev@example.com', website: 'https://example.com' }),
          invalid(registerAgentSchema, { name: 'weather-bot', email: 'x', website: 'https://example.com' }),
          invalid(registerAgentSchema, { name: 'weather-bot', email: 'dev@example.com', website: 'ftp://example.com' }),
          UNKNOWN_FIELD(),
          msg('invalidJsonBody'),
          INVALID_IDEMPOTENCY_KEY(),
        ]),
        409: errors(
          'The name, or one that looks like it, is registered (case-insensitive, look-alike skeleton); or a request with this ' +
            'Idempotency-Key is still in flight.',
          [msg('agentNameTaken'), msg('idempotencyInProgress')],
          ['Retry-After'],
        ),
        ...BODY_ERRORS,
        422: OPTIONAL_IDEMPOTENCY_ERRORS[422],
        503: BUSY,
      },
    }),
  },
  ...AGENT_CHARGE_ROUTES,
  {
    name: 'get-balance',
    method: 'GET',
    path: '/api/v1/agents/balance',
    table: BALANCE,
    operation: () => ({
      summary: "The agent's earned balance",
      tag: 'Agents',
      security: [['agentKey']],
      responses: {
        200: ok('What the agent may withdraw, per currency.', agentBalanceBody, { balances: { USD: 1.5, USDC: 0 } }),
        401: errors('The agent key is unknown or disabled.', [msg(AUTH_MESSAGES.balance)]),
        503: BUSY,
      },
    }),
  },
  {
    name: 'withdraw',
    method: 'POST',
    path: '/api/v1/agents/withdraw',
    table: WITHDRAW,
    queue: true,
    operation: () => ({
      summary: 'Withdraw earnings',
      description:
        'USDC to a Solana wallet, USD to PayPal, minus a 3% platform fee (half up). The payout is recorded PENDING and paid ' +
        'by the payout worker; poll it with GET /api/v1/agents/withdraw?payoutId=. One payout per agent and currency in flight. ' +
        'A USDC wallet must have its USDC token account (checked on the chain before anything is written), unless the body ' +
        'says `createTokenAccount: true`: then the payout creates a missing account for the account-creation fee (0.50 USDC ' +
        'by default), shown as `breakdown.accountCreationFee` and taken from the net amount.',
      tag: 'Withdrawals',
      security: [['agentKey']],
      idempotent: true,
      body: {
        name: 'WithdrawRequest',
        schema: withdrawSchema,
        example: { amount: 10, currency: 'USDC', walletAddress: WALLET },
      },
      responses: {
        200: {
          description:
            'Accepted: debited and queued. `accountCreationFee` is in the breakdown when the request asked createTokenAccount ' +
            '(0 when the account already existed); then netAmount = grossAmount − platformFee − accountCreationFee.',
          schema: withdrawalBody,
          examples: WITHDRAWAL_EXAMPLES,
          headers: ['Idempotent-Replayed'],
        },
        400: errors(
          'Checked in this order: Idempotency-Key, body, destination (for USDC its token account), fees against the amount, ' +
            'balance, payout in flight.',
          [
            msg('missingIdempotencyKey'),
            msg('invalidJsonBody'),
            invalid(withdrawSchema, { currency: 'USD', walletAddress: WALLET }),
            invalid(withdrawSchema, { amount: num('10'), currency: 'EUR', walletAddress: WALLET }),
            invalid(withdrawSchema, { amount: num('10'), currency: 'USDC' }),
            UNKNOWN_FIELD(),
            invalid(withdrawSchema, { amount: num('10'), currency: 'USDC', walletAddress: WALLET, createTokenAccount: 'yes' }),
            invalid(withdrawSchema, { amount: num('10'), currency: 'USD', walletAddress: 'dev@example.com', createTokenAccount: true }),
            invalid(withdrawSchema, { amount: num('0'), currency: 'USD', walletAddress: 'dev@example.com' }),
            amountProblem('1.001', 'USD'),
            amountProblem('1000001', 'USD'),
            msg('invalidSolanaAddress'),
            msg('invalidPaypalAccount'),
            msg('noUsdcTokenAccount'),
            msg('amountTooSmallForFees'),
            msg('withdrawalInsufficientBalance'),
            msg('payoutInProgress'),
          ],
        ),
        401: errors('The agent key is unknown or disabled.', [msg(AUTH_MESSAGES.withdraw)]),
        409: errors(
          'A request with this key is in flight, or the balance kept changing.',
          [msg('idempotencyInProgress'), msg('balanceChangedWhileWithdrawing')],
          ['Retry-After'],
        ),
        413: BODY_ERRORS[413],
        415: BODY_ERRORS[415],
        422: IDEMPOTENCY_ERRORS[422],
        503: errors(
          'DynamoDB kept throttling past the SDK retries, or the Solana RPC node could not say whether a USDC wallet has its ' +
            'token account; nothing was written. Retry after the given seconds (with the same Idempotency-Key).',
          [msg('serviceBusy'), msg('solanaUnavailable')],
          ['Retry-After'],
        ),
      },
    }),
  },
  {
    name: 'list-withdrawals',
    method: 'GET',
    path: '/api/v1/agents/withdraw',
    table: LIST_WITHDRAWALS,
    // Shows a settled movement's receipt link (DESIGN §27, on PUBLIC_BASE_URL).
    publicLinks: true,
    operation: () => ({
      summary: "List the agent's payouts, or get one",
      description: '`?payoutId=` answers that one Payout; otherwise a page of payouts, newest first.',
      tag: 'Withdrawals',
      security: [['agentKey']],
      query: listWithdrawalsQuerySchema,
      responses: {
        200: {
          description: 'A page of payouts, or with `payoutId` the one Payout.',
          schema: component('PayoutListOrPayout', payoutListBody.or(payoutBody)),
          examples: { list: { payouts: [EXAMPLE_PAYOUT], nextCursor: null }, payout: EXAMPLE_PAYOUT },
        },
        400: errors('An invalid query parameter.', LIST_400()),
        401: errors('The agent key is unknown or disabled.', [msg(AUTH_MESSAGES.listWithdrawals)]),
        404: errors('No such payout of this agent.', [msg('payoutNotFound')]),
        503: BUSY,
      },
    }),
  },
  ...CHARGE_LIFECYCLE_ROUTES,
  {
    name: 'rotate-agent-key',
    method: 'POST',
    path: '/api/v1/agents/keys/rotate',
    table: uses('agentKeyLookup', 'moveAgentKey'),
    operation: () => ({
      summary: "Rotate the agent's key",
      description:
        'A new key, shown once. The old key stops moving money at once (charges, captures, releases, refunds, withdrawals), ' +
        'and stops authenticating reads within 30 s. `enabled` is carried over: a disabled agent may rotate and stays disabled.',
      tag: 'Agents',
      security: [['agentKey']],
      responses: {
        200: ok('The new key, shown once.', rotatedAgentKeyBody, {
          apiKey: 'ag_live_9Tq4GmYp7VwXz3RtN8bH2cJdLfE6sA5uQ1oPiU',
          agentId: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
          enabled: true,
        }),
        401: errors('The agent key is unknown (or already rotated).', [msg(AUTH_MESSAGES.rotateKey)]),
        409: errors('Another rotation of this key, or an operator flipping `enabled`, won.', [msg('agentKeyRotatedConcurrently')]),
        503: BUSY,
      },
    }),
  },
] as const satisfies readonly DocumentedRoute[];
