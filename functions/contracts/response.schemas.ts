/**
 * The response bodies, as zod schemas: what docs/openapi.json says each answer looks like, and
 * what the e2e suites hold every answer to (test/support/contract.ts). Strict objects, so a field
 * a view adds without the document saying so fails the drift check.
 *
 * Each schema is registered under its component name (`#/components/schemas/<id>`).
 */

import * as z from 'zod';
import { PLATFORM_FEE_RATE } from '../core/fees';
import { CURRENCIES } from '../core/money';
import { TOPUP_FAILURE_REASONS } from '../core/topups';

/** The component schemas of the document: request and response bodies, by name. */
export const COMPONENTS = z.registry<{ id: string }>();

/** Registers a schema as `#/components/schemas/<id>` and returns it. */
export function component<S extends z.ZodType>(id: string, schema: S): S {
  COMPONENTS.add(schema, { id });
  return schema;
}

const timestamp = z.iso.datetime().meta({ description: 'ISO 8601, UTC, milliseconds.', examples: ['2026-01-15T09:30:00.000Z'] });
const currency = z.enum(CURRENCIES).meta({ description: 'USD has 2 decimal places, USDC 6.' });
const amount = (description: string) =>
  z.number().meta({
    description: `${description} A decimal JSON number in currency units, written exactly (1.5 is 1.50); never a rounded float.`,
    examples: [1.5],
  });
const id = (prefix: string, what: string) =>
  z
    .string()
    .regex(new RegExp(`^${prefix}[0-9a-z]{26}$`))
    .meta({ description: `${what} id: "${prefix}" + a lower-case ULID.`, examples: [`${prefix}01jhx3k6v1f8q2n7c9m4p5r6s7`] });

/** A charge's id, or an x402 purchase's (`xp…`): the id a client sees for a purchase's hold (contracts/views.ts). */
const CHARGE_OR_PURCHASE_ID = /^(c[0-9a-z]{26}(a[0-9a-z]{26})?|xp[0-9a-z]{26}a[0-9a-z]{26})$/;

export const errorBody = component(
  'Error',
  z.strictObject({ error: z.string().meta({ description: 'The exact public message.' }) }).meta({
    description: 'Every error answer. The message is part of the contract (README "Endpoints").',
  }),
);

export const chargeBody = component(
  'Charge',
  z.strictObject({
    id: z
      .string()
      .regex(CHARGE_OR_PURCHASE_ID)
      .meta({
        description:
          'Charge id, opaque to clients: "c" + a lower-case ULID + the id of the agent it was made for (54 characters); charges made before 2026-11-24 have ids without the agent part (27 characters). Both forms sort by creation. An x402 purchase (DESIGN §22) is named by its own id (`xp…`), never the hold\'s behind it.',
        examples: ['c01jhx3k6v1f8q2n7c9m4p5r6s7a01jhx2z9e4w7q1m3v8b6n5k2d0'],
      }),
    idempotencyKey: z.string().meta({ description: 'The Idempotency-Key the charge was created with.' }),
    amount: amount('The amount charged.'),
    currency,
    description: z.string(),
    status: z.enum(['PENDING', 'SUCCESS', 'FAILED', 'EXPIRED']).meta({
      description:
        "PENDING: the amount is held, waiting for the user's approval or the agent's capture (pendingReason). SUCCESS: the agent " +
        'was paid (refunds may give some back: refundedAmount). FAILED: refused, declined or released (failureReason; kept, ' +
        'listed). EXPIRED: nobody acted before expiresAt; the hold went back to the user.',
    }),
    createdAt: timestamp,
    failureReason: z.string().nullable().meta({ description: "Why a FAILED charge failed (the refusal's exact error); else null." }),
    pendingReason: z.enum(['user_approval', 'capture']).nullable().meta({ description: 'Why a PENDING charge waits; else null.' }),
    expiresAt: timestamp.nullable().meta({ description: 'When a PENDING charge expires; else null.' }),
    authorizedAmount: amount(
      'Holds (`capture: false`): the amount authorized and held; `amount` is what was captured once SUCCESS. Null for other charges.',
    ).nullable(),
    refundedAmount: amount('What refunds gave back to the user so far, cumulative (0 when none).'),
    grantId: id('g', 'Grant')
      .optional()
      .meta({ description: 'The grant whose key made the charge; absent on charges made with the account key.' }),
  }),
);

export const pendingChargeBody = component(
  'PendingCharge',
  chargeBody.extend({
    approvalUrl: z
      .url()
      .nullable()
      .meta({
        description:
          'A single-use page where the user approves or declines; hand it to the user. Never stored in clear. Null on a charge made ' +
          'with a grant key: the link reaches only the payer (their charge.approval_requested webhook and PENDING history).',
      }),
  }),
);

const limits = z
  .strictObject({ USD: amount('A limit in USD.').optional(), USDC: amount('A limit in USDC.').optional() })
  .meta({ description: 'Per currency; an absent currency has no limit.' });
const rules = {
  perCharge: limits.optional(),
  daily: limits.optional().meta({ description: 'The UTC day: SUCCESS charges and PENDING holds.' }),
  monthly: limits.optional().meta({ description: 'The UTC calendar month.' }),
  approvalAbove: limits.optional().meta({ description: 'Charges above this wait for the user (202 PENDING).' }),
};
export const policyBody = component(
  'SpendingPolicy',
  z.strictObject({
    ...rules,
    approvalWindowSeconds: z.number().int().min(60).max(604800).optional(),
    agents: z.record(z.string(), z.strictObject({ ...rules, blocked: z.boolean().optional() })).optional(),
  }),
);

export const userChargeBody = component(
  'UserCharge',
  chargeBody.extend({
    id: z
      .string()
      .regex(CHARGE_OR_PURCHASE_ID)
      .meta({ description: 'The charge id (`c…`), or an x402 purchase\'s (`xp…`, with `type: "x402_purchase"`).' }),
    type: z
      .literal('x402_purchase')
      .optional()
      .meta({ description: 'An x402 purchase (DESIGN §22): the agent paid an x402 seller from this balance; absent on charges.' }),
    payTo: z.string().optional().meta({ description: "An x402 purchase: the seller's wallet paid." }),
    resource: z
      .object({ url: z.string(), description: z.string().optional() })
      .nullable()
      .optional()
      .meta({ description: 'An x402 purchase: what was bought, when the agent said.' }),
    agent: z.strictObject({ id: id('a', 'Agent'), name: z.string().nullable() }),
    approvalUrl: z
      .url()
      .optional()
      .meta({ description: "On a PENDING charge waiting for the payer (pendingReason user_approval): the payer's approval page." }),
  }),
);
export const userChargeListBody = component(
  'UserChargeList',
  z.strictObject({ data: z.array(userChargeBody), nextCursor: z.string().nullable() }),
);

// --- The charge lifecycle (docs/lifecycle.md) ---
export const rotatedAgentKeyBody = component(
  'RotatedAgentKey',
  z.strictObject({
    apiKey: z.string().meta({ description: 'The new agent key, shown once. The old key stops moving money at once.' }),
    agentId: id('a', 'Agent'),
    enabled: z.boolean().meta({ description: 'Carried over from before the rotation.' }),
  }),
);
// --- end of the charge lifecycle ---

export const chargeListBody = component(
  'ChargeList',
  z.strictObject({
    data: z.array(chargeBody).meta({ description: 'Newest first.' }),
    pagination: z.strictObject({
      total: z.int().min(0),
      page: z.int().min(1),
      limit: z.int().min(1).max(100),
      totalPages: z.int().min(0),
    }),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  }),
);

export const balancesBody = component(
  'Balances',
  z.strictObject({ USD: amount('USD balance.'), USDC: amount('USDC balance.') }).meta({ description: 'One balance per currency.' }),
);

export const agentBalanceBody = component(
  'AgentBalance',
  z.strictObject({ balances: balancesBody }).meta({ description: 'What the agent has earned and may withdraw.' }),
);

export const registeredAgentBody = component(
  'RegisteredAgent',
  z.strictObject({
    message: z.string(),
    apiKey: z
      .string()
      .regex(/^ag_live_[1-9A-HJ-NP-Za-km-z]+$/)
      .meta({ description: 'The agent key (`x-agent-key`). Shown once; stored only as its SHA-256.' }),
    enabled: z.literal(false).meta({ description: 'An agent starts disabled until an operator verifies it.' }),
    agentId: id('a', 'Agent'),
  }),
);

export const agentBody = component(
  'Agent',
  z.strictObject({
    id: id('a', 'Agent'),
    name: z.string(),
    email: z.string(),
    website: z.string(),
    enabled: z.boolean(),
    createdAt: timestamp,
  }),
);

export const agentListBody = component(
  'AgentList',
  z.strictObject({
    data: z.array(agentBody),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  }),
);

export const adminAgentBody = component(
  'AdminAgent',
  agentBody.extend({ balances: balancesBody }).meta({ description: 'An agent as the operator sees it: with what it may withdraw.' }),
);

export const createdUserBody = component(
  'CreatedUser',
  z.strictObject({
    id: id('u', 'User'),
    userKey: z
      .string()
      .regex(/^uk_live_[1-9A-HJ-NP-Za-km-z]+$/)
      .meta({ description: 'The user key (`x-user-key`). Shown once; stored only as its SHA-256.' }),
  }),
);

export const userBody = component('User', z.strictObject({ id: id('u', 'User'), balances: balancesBody }));
export const meBody = component(
  'Me',
  z.strictObject({
    id: id('u', 'User'),
    balances: balancesBody,
    held: balancesBody,
    // What PayPal took back beyond the balance (docs/topups.md, reversals); see the operation.
    owed: balancesBody,
    policy: policyBody,
  }),
);

const network = z.enum(['SOL', 'PAYPAL']).meta({ description: 'SOL for USDC (a Solana wallet), PAYPAL for USD.' });
const feeRate = z.literal(PLATFORM_FEE_RATE);

export const withdrawalBody = component(
  'WithdrawalAccepted',
  z.strictObject({
    success: z.literal(true),
    payoutId: id('p', 'Payout'),
    breakdown: z.strictObject({
      grossAmount: amount('Debited from the agent balance.'),
      platformFeeRate: feeRate,
      platformFee: amount('3% of the gross amount, rounded half up.'),
      accountCreationFee: amount('With createTokenAccount: the fee for creating the USDC token account, 0 if it existed.').optional(),
      netAmount: amount('What the rail pays: gross less the fees.'),
      currency,
      walletAddress: z.string(),
      network,
    }),
  }),
);

export const payoutBody = component(
  'Payout',
  z.strictObject({
    id: id('p', 'Payout'),
    agentId: id('a', 'Agent'),
    currency,
    status: z.enum(['PENDING', 'PROCESSING', 'HELD', 'COMPLETED', 'FAILED']).meta({
      // HELD (docs/payouts.md): the agent was disabled before it was paid; the operator releases or cancels it.
      description: 'FAILED payouts were refunded (the gross amount is back on the agent balance).',
    }),
    destination: z.strictObject({ network, walletAddress: z.string() }),
    externalId: z.string().nullable().meta({ description: 'The rail reference: the Solana signature, or the PayPal batch id.' }),
    txHash: z.string().nullable().meta({ description: 'The Solana transaction signature (null for PayPal).' }),
    createdAt: timestamp,
    processedAt: timestamp.nullable(),
    amount: amount('The gross amount debited.'),
    fee: amount('The platform fee.'),
    netAmount: amount('What the rail pays: amount less the fees.'),
    platformFeeRate: feeRate,
    accountCreationFee: amount('The fee for creating the USDC token account (createTokenAccount); 0 when none.'),
    failureReason: z.string().nullable(),
  }),
);

export const payoutListBody = component(
  'PayoutList',
  z.strictObject({
    payouts: z.array(payoutBody).meta({ description: 'Newest first.' }),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  }),
);

export const healthBody = component('Health', z.strictObject({ status: z.literal('ok') }));

/** The OpenAPI document itself (served as it is committed; described loosely, not by itself). */
export const openApiDocumentBody = component(
  'OpenApiDocument',
  z.looseObject({ openapi: z.string(), info: z.looseObject({ version: z.string() }) }).meta({ description: 'This document.' }),
);

/** A JSON-RPC 2.0 message (MCP over streamable HTTP); its result is MCP's, described there. */
export const jsonRpcMessage = component(
  'JsonRpcMessage',
  z
    .looseObject({ jsonrpc: z.literal('2.0') })
    .meta({ description: 'A JSON-RPC 2.0 request, notification or response (https://modelcontextprotocol.io).' }),
);
/** One message, or a batch of at most 10 (functions/mcp/remote.ts MAX_MESSAGES_PER_REQUEST). */
export const jsonRpcMessages = component(
  'JsonRpcMessages',
  z.union([jsonRpcMessage, z.array(jsonRpcMessage).min(1).max(10)]).meta({
    description: 'One JSON-RPC message, or a batch (an array) of at most 10; a batch is answered with an array.',
  }),
);

// Top-ups (docs/topups.md).
const topupCommon = {
  id: id('t', 'Top-up'),
  status: z.enum(['PENDING', 'COMPLETED', 'EXPIRED', 'FAILED']).meta({
    description:
      'PENDING: waiting for the payment. COMPLETED: the amount received was credited to the balance. EXPIRED: nothing arrived ' +
      'before expiresAt (or the PayPal order was declined); nothing was credited. FAILED: the rail did something the top-up ' +
      'cannot take (failureReason); nothing was credited and an operator was alerted: any money taken is refunded or credited by hand.',
  }),
  externalId: z
    .string()
    .nullable()
    .meta({ description: 'The Solana signature or PayPal capture id that was credited (FAILED: the capture concerned); null otherwise.' }),
  failureReason: z
    .enum(Object.values(TOPUP_FAILURE_REASONS))
    .nullable()
    .meta({ description: 'Why a FAILED top-up failed; null otherwise.' }),
  createdAt: timestamp,
  expiresAt: timestamp,
  completedAt: timestamp.nullable().meta({ description: 'When the payment was credited; null until COMPLETED.' }),
};

export const usdcTopupBody = component(
  'UsdcTopup',
  z.strictObject({
    ...topupCommon,
    currency: z.literal('USDC'),
    amount: amount('The USDC received and credited; null until COMPLETED.').nullable(),
    network: z.literal('SOL'),
    address: z.string().meta({ description: "The platform's deposit wallet (pay its USDC token account, as Solana Pay does)." }),
    reference: z
      .string()
      .meta({ description: 'Solana Pay reference: a fresh public key the paying transaction must carry (read-only account).' }),
    solanaPayUrl: z
      .string()
      .meta({ description: 'A Solana Pay transfer request: `solana:<address>?spl-token=<mint>&reference=<reference>&label=…`.' }),
  }),
);

export const usdTopupBody = component(
  'UsdTopup',
  z.strictObject({
    ...topupCommon,
    currency: z.literal('USD'),
    amount: amount('The amount ordered; once COMPLETED, the amount captured and credited.'),
    approveUrl: z.string().meta({ description: 'Where the user approves the PayPal order.' }),
  }),
);

export const topupBody = component('Topup', z.union([usdcTopupBody, usdTopupBody]));

export const topupListBody = component(
  'TopupList',
  z.strictObject({
    data: z.array(topupBody),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  }),
);

export const webhookReceivedBody = component('WebhookReceived', z.strictObject({ received: z.literal(true) }));
// Webhooks (docs/webhooks.md).
const webhookId = z
  .string()
  .regex(/^wh_[0-9a-z]{26}$/)
  .meta({ description: 'Webhook endpoint id: "wh_" + a lower-case ULID.', examples: ['wh_01jhx3k6v1f8q2n7c9m4p5r6s7'] });
const eventId = z
  .string()
  .regex(/^evt_[0-9a-z]{26}$/)
  .meta({
    description: 'Event id: "evt_" + a lower-case ULID; the `webhook-id` header of every delivery of it.',
    examples: ['evt_01jhx3k6v1f8q2n7c9m4p5r6s7'],
  });
const webhookFields = {
  id: webhookId,
  url: z.string().meta({ description: 'Where events are POSTed.' }),
  events: z.array(z.string()).meta({ description: 'The event types this endpoint receives.' }),
  createdAt: timestamp,
};
export const webhookBody = component('Webhook', z.strictObject(webhookFields));
export const createdWebhookBody = component(
  'CreatedWebhook',
  z.strictObject({
    ...webhookFields,
    secret: z
      .string()
      .regex(/^whsec_/)
      .meta({
        description: 'The signing secret (Standard Webhooks: `whsec_` + base64). Shown once; store it to verify deliveries.',
      }),
  }),
);
export const webhookListBody = component('WebhookList', z.strictObject({ webhooks: z.array(webhookBody) }));
export const webhookDeliveryBody = component(
  'WebhookDelivery',
  z.strictObject({
    id: z.string().meta({ description: 'The attempt id (a lower-case ULID: time order).' }),
    eventId,
    type: z.string().meta({ description: 'The event type.', examples: ['charge.succeeded'] }),
    attempt: z.number().int().min(1).meta({ description: 'Which attempt at this event this was (1 = first).' }),
    status: z.enum(['succeeded', 'failed', 'dead']).meta({
      description:
        'succeeded: a 2xx within 5 s. failed: another attempt is scheduled (nextAttemptAt); `not sent` in error when the endpoint was backed off. dead: the last attempt failed; no more.',
    }),
    statusCode: z.number().int().nullable().meta({ description: "The receiver's HTTP status; null when none (timeout, refused)." }),
    error: z.string().nullable().meta({ description: 'Why the attempt failed; null when it succeeded.' }),
    createdAt: timestamp,
    durationMs: z.number().int().min(0),
    nextAttemptAt: timestamp.nullable().meta({ description: 'When the next attempt is due (status failed); else null.' }),
  }),
);
export const webhookDeliveryListBody = component(
  'WebhookDeliveryList',
  z.strictObject({ deliveries: z.array(webhookDeliveryBody).meta({ description: 'Most recent first.' }) }),
);
export const webhookEventBody = component(
  'WebhookEvent',
  z.strictObject({
    id: eventId,
    type: z.string().meta({ examples: ['ping'] }),
    createdAt: timestamp,
    data: z.record(z.string(), z.unknown()).meta({ type: 'object', description: 'The object the event is about, as the API shows it.' }),
  }),
);

// Grants (docs/grants.md).
const grantAmount = (description: string) => amount(`${description} In the grant's currency.`);
const grantShape = {
  id: id('g', 'Grant'),
  agent: z
    .strictObject({ id: id('a', 'Agent'), name: z.string() })
    .meta({ description: 'The one agent whose charges the grant key pays.' }),
  currency,
  limits: z
    .strictObject({
      perCharge: grantAmount('The most one charge may be.').optional(),
      daily: grantAmount('The most per UTC calendar day (SUCCESS charges and open holds).').optional(),
      monthly: grantAmount('The most per UTC calendar month.').optional(),
      total: grantAmount('A lifetime budget.').optional(),
    })
    .meta({ description: 'Only the limits given; an absent limit is no limit.' }),
  approvalAbove: grantAmount("A charge above it waits for the payer's approval.").optional(),
  description: z.string(),
  expiresAt: timestamp.nullable().meta({ description: 'When the grant ends; null: when revoked.' }),
  status: z.enum(['active', 'revoked', 'expired']).meta({ description: 'Computed now: revoked wins over expired.' }),
  spent: grantAmount('SUCCESS charges and open holds made under the grant.'),
  createdAt: timestamp,
  revokedAt: timestamp.nullable(),
};
export const grantBody = component('Grant', z.strictObject(grantShape));
export const createdGrantBody = component(
  'CreatedGrant',
  z.strictObject({
    ...grantShape,
    key: z
      .string()
      .regex(/^ug_live_/)
      .meta({ description: 'The grant key (`ug_live_…`), shown this once: the agent sends it as x-user-key on its charges.' }),
  }),
);
export const grantListBody = component(
  'GrantList',
  z.strictObject({
    data: z.array(grantBody),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  }),
);
/** A rotation of the account key ends what the old key made (docs/grants.md "Rotating the account key"). */
export const rotatedUserKeyBody = component(
  'RotatedUserKey',
  z.strictObject({
    userKey: z.string().meta({ description: 'Shown once.' }),
    revokedGrants: z.array(grantBody).meta({
      description:
        'Every grant that was active, now revoked: whoever held the old key may have made them. Make again those that were yours.',
    }),
    deletedWebhooks: z.array(webhookBody).meta({
      description: 'Every user webhook endpoint, now deleted, for the same reason. Register again those that were yours.',
    }),
    releasedCharges: z.array(userChargeBody).meta({
      description:
        'Every charge made with the account key that was open (awaiting approval or capture), now FAILED `account key rotated` with its hold back: ' +
        'its agent was given the approval link, or may capture it. Charges made with a grant key end with their revoked grant.',
    }),
    endedSessions: z.number().int().min(0).meta({
      description:
        "How many of the payer's console sessions it ended: every one, whatever opened it (a passkey, or the account key). Sign in again with the new key or a passkey.",
    }),
    removedPasskeys: z.array(z.string()).meta({
      description:
        'The names of the passkeys it removed: every passkey added from a session the account key opened (or vouched for by one that was), since whoever held the old key could have added it. Passkeys added in a passkey session, and the one made at sign-up, stay.',
    }),
  }),
);
export const grantRequestBody = component(
  'GrantRequest',
  z.strictObject({
    id: z
      .string()
      .regex(/^gr[0-9a-z]{26}$/)
      .meta({ description: 'Grant request id: "gr" + a lower-case ULID.', examples: ['gr01jhx3k6v1f8q2n7c9m4p5r6s7'] }),
    status: z.enum(['pending', 'approved', 'claimed', 'denied', 'expired']).meta({
      description:
        'approved: the payer allowed; the next read takes the key and makes it claimed. expired: not answered within 15 minutes.',
    }),
    consentUrl: z.string().meta({ description: 'The page the payer allows or denies at. Give it to the payer only.' }),
    expiresAt: timestamp.meta({ description: 'The request lives 15 minutes.' }),
    grant: z
      .strictObject({
        ...grantShape,
        key: z
          .string()
          .regex(/^ug_live_/)
          .optional()
          .meta({ description: 'Only on the first read after approval: the grant key, once.' }),
      })
      .nullable()
      .meta({ description: 'The grant once the payer allowed it; else null.' }),
  }),
);
