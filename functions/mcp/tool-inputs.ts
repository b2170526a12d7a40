/**
 * The MCP tools' arguments (functions/mcp/tools.ts uses them): each tool's zod input, built from the
 * API's own request schemas where the argument is the API's field, and the small helpers that turn
 * arguments back into the route's HTTP request (amounts as their exact JSON literals). MCP carries
 * amounts as JSON numbers; their shortest round-trip text is the literal the API's parser reads.
 */
import { LosslessNumber } from 'lossless-json';
import * as z from 'zod';
import { createGrantRequestSchema } from '../contracts/grants';
import {
  AMOUNT_META,
  createChargeSchema,
  listChargesQuerySchema,
  listWithdrawalsQuerySchema,
  withdrawSchema,
} from '../contracts/request.schemas';
import { MAX_GRANT_TTL_SECONDS, MIN_GRANT_TTL_SECONDS } from '../core/grants';
/**
 * An amount as MCP carries it: a JSON number, already parsed by the JSON-RPC layer. Its shortest
 * round-trip text (String(n)) is the literal for every amount the API accepts (at most 13
 * significant digits), so it is then read by the API's own exact parser; only a literal of more
 * than 15 significant digits (never a valid amount) can reach it already rounded.
 */
export const mcpAmount = z.number().meta(AMOUNT_META);
export const literal = (n: number) => new LosslessNumber(String(n));

export const idempotencyKey = z.string().meta({
  description:
    'Required: 1-255 printable ASCII characters, unique per intended operation (a UUID). Calling again with the same key and ' +
    'arguments returns the first answer and moves no money twice; with other arguments it is an error.',
  examples: ['5b0c7d1e-0000-4000-8000-000000000001'],
});

export const pageNumber = (description: string) => z.int().min(1).optional().meta({ description });
export const limit = pageNumber("Page size, 1 to 100 (default 20, or the cursor's own).");
export const cursor = listChargesQuerySchema.shape.cursor;

export const createChargeInput = z.strictObject({
  ...createChargeSchema.in.shape,
  amount: mcpAmount,
  capture: z.boolean().optional().meta({
    description:
      'false: only authorize (hold) the amount; capture all or part of it later with capture_charge, or release_charge it. Default true.',
  }),
  holdSeconds: z.int().min(60).max(604_800).optional().meta({
    description: 'With capture false: how long the hold waits for capture_charge, in seconds (60-604800, default 3600).',
  }),
  user_key: z.string().meta({
    description:
      "The key that authorizes this charge: a grant key (ug_live_…) the payer gave this agent, or (legacy) the payer's account key (uk_live_…).",
  }),
  idempotency_key: idempotencyKey,
});

export const listChargesInput = z.strictObject({
  page: pageNumber('Page number, from 1 (page × limit at most 10000; follow cursor beyond).'),
  limit,
  cursor,
});

export const withdrawInput = z.strictObject({ ...withdrawSchema.in.shape, amount: mcpAmount, idempotency_key: idempotencyKey });

export const listWithdrawalsInput = z.strictObject({ limit, cursor, payout_id: listWithdrawalsQuerySchema.shape.payoutId });

/** The hold arguments as the API's body carries them (holdSeconds as its exact JSON literal). */
export const holdTerms = (capture: boolean | undefined, holdSeconds: number | undefined) => ({
  ...(capture === undefined ? {} : { capture }),
  ...(holdSeconds === undefined ? {} : { holdSeconds: literal(holdSeconds) }),
});

// --- The charge lifecycle (docs/lifecycle.md) ---
export const chargeId = z.string().max(64).meta({ description: 'The charge id (c…).' });
export const lifecycleAmount = (description: string) => mcpAmount.optional().meta({ ...AMOUNT_META, description });
export const captureInput = z.strictObject({
  charge_id: chargeId,
  amount: lifecycleAmount('How much of the hold to take (default: all of it); the rest goes back to the user.'),
  idempotency_key: idempotencyKey,
});
export const releaseInput = z.strictObject({ charge_id: chargeId, idempotency_key: idempotencyKey });
export const refundInput = z.strictObject({
  charge_id: chargeId,
  amount: lifecycleAmount('How much to give back (default: all that is left to refund).'),
  idempotency_key: idempotencyKey,
});
/** `x402_refund` (DESIGN §28): an x402 payment (`x402_…`) given back in part or whole. */
export const x402RefundInput = z.strictObject({
  payment_id: z.string().max(64).meta({ description: 'The x402 payment id (x402_…), as GET /api/v1/agents/x402/payments lists it.' }),
  amount: lifecycleAmount('How much USDC to give back (default: all that is left of the payment).'),
  idempotency_key: idempotencyKey,
});
export const amountBody = (amount: number | undefined) => (amount === undefined ? {} : { amount: literal(amount) });
// --- end of the charge lifecycle ---

export const digits = (n: number | undefined) => (n === undefined ? undefined : String(n));

// --- Grant requests (docs/grants.md): the agent asks, the payer consents, the agent polls ---
export const termsIn = createGrantRequestSchema.in.shape;
export const grantAmount = (description: string) => mcpAmount.optional().meta({ ...AMOUNT_META, description });
export const requestGrantInput = z.strictObject({
  currency: termsIn.currency,
  limits: z
    .strictObject({
      perCharge: grantAmount('The most one charge may be.'),
      hourly: grantAmount('The most per UTC clock hour.'),
      daily: grantAmount('The most per UTC calendar day (SUCCESS charges and open holds).'),
      monthly: grantAmount('The most per UTC calendar month.'),
      total: grantAmount('A lifetime budget.'),
    })
    .optional()
    .meta({ description: "Amounts in the grant's one currency; every limit optional, an absent limit is no limit." }),
  approvalAbove: grantAmount("A charge above it waits for the payer's approval."),
  // Checked and normalised by the API's own schema (contracts/grants.ts); shown to the payer on the consent page.
  scope: z
    .strictObject({
      payees: z.array(z.string()).optional().meta({ description: 'Solana addresses (base58) the grant may pay, 1-20.' }),
      hosts: z
        .array(z.string())
        .optional()
        .meta({ description: 'Hosts purchases may be for, 1-20: api.example.com, or *.example.com for its sub-domains.' }),
    })
    .optional()
    .meta({ description: 'Where the grant may pay (x402 purchases only; a scoped grant pays no plain charge). Absent: anywhere.' }),
  // Bounds are checked by the API's own schema (its message); the JSON Schema states them.
  ttlSeconds: z
    .int()
    .optional()
    .meta({
      minimum: MIN_GRANT_TTL_SECONDS,
      maximum: MAX_GRANT_TTL_SECONDS,
      description: `The grant ends this many seconds after the payer allows it (${MIN_GRANT_TTL_SECONDS}-${MAX_GRANT_TTL_SECONDS}); without it, it lasts until revoked.`,
    }),
  description: termsIn.description,
  idempotency_key: idempotencyKey,
});
export type RequestGrantArgs = z.infer<typeof requestGrantInput>;

/** The terms as the API's body carries them: amounts and seconds as their exact JSON literals. */
export function termsBody({ currency, limits, approvalAbove, scope, ttlSeconds, description }: RequestGrantArgs) {
  const given = Object.entries(limits ?? {}).filter((e): e is [string, number] => e[1] !== undefined);
  return {
    currency,
    ...(limits === undefined ? {} : { limits: Object.fromEntries(given.map(([name, n]) => [name, literal(n)])) }),
    ...(approvalAbove === undefined ? {} : { approvalAbove: literal(approvalAbove) }),
    ...(scope === undefined ? {} : { scope }),
    ...(ttlSeconds === undefined ? {} : { ttlSeconds: literal(ttlSeconds) }),
    ...(description === undefined ? {} : { description }),
  };
}

export const grantRequestId = z.string().max(64).meta({ description: 'The grant request id (gr…), from request_grant.' });
// --- end of grant requests ---

// --- Tabs (DESIGN §29, docs/tabs.md) ---
const tabId = z.string().max(64).meta({ description: 'The tab id (t…), as tab_open answered it.' });

export const openTabInput = z.strictObject({
  currency: z.enum(['USD', 'USDC']).meta({ description: 'USD (2 decimal places) or USDC (6).' }),
  limit: mcpAmount.meta({ description: 'The most the tab may use, held from the payer now.' }),
  description: z.string().max(255).optional().meta({ description: 'What the tab is for (the payer sees it).' }),
  ttlSeconds: z.int().min(60).max(86_400).optional().meta({ description: 'How long it stays open, in seconds (60-86400, default 3600).' }),
  user_key: z.string().meta({
    description: "The key that authorizes the hold: a grant key (ug_live_…) the payer gave this agent, or the payer's account key.",
  }),
  idempotency_key: idempotencyKey,
});

export const useTabInput = z.strictObject({
  tab_id: tabId,
  amount: mcpAmount.meta({ description: "What this use costs, in the tab's currency, exactly (never rounded)." }),
  description: z.string().max(100).optional().meta({ description: 'What this use was (e.g. "1234 tokens").' }),
  idempotency_key: idempotencyKey,
});

export const closeTabInput = z.strictObject({ tab_id: tabId });
