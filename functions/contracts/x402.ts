/**
 * The x402 facilitator's wire format (x402 protocol v2, DESIGN §17), as zod schemas read by the
 * handlers, the use cases and the OpenAPI generator alike. Requests are checked for what the
 * service itself reads; every other field passes through untouched to the stock scheme
 * (`@x402/svm`), which does the transaction checks.
 */
import * as z from 'zod';
import { receiptLink } from './responses/receipts';

/** What the seller asked for, as its middleware sends it (`PaymentRequirements`). */
export const paymentRequirementsSchema = z.looseObject({
  scheme: z.string().min(1).max(64),
  network: z.string().min(1).max(128),
  asset: z.string().min(1).max(128),
  /** Atomic units of the asset (micro-USDC), a string of digits. */
  amount: z.string().min(1).max(40),
  payTo: z.string().min(1).max(128),
  maxTimeoutSeconds: z.number().int().min(0).max(86_400),
  extra: z.record(z.string(), z.unknown()).optional(),
});

/** What the buyer sent in `PAYMENT-SIGNATURE` (`PaymentPayload`): for `exact` on Solana, a base64 transaction. */
export const paymentPayloadSchema = z.looseObject({
  x402Version: z.number().int(),
  resource: z.looseObject({ url: z.string().max(2_048) }).optional(),
  accepted: z.looseObject({ scheme: z.string().max(64), network: z.string().max(128) }),
  payload: z.record(z.string(), z.unknown()),
  extensions: z.record(z.string(), z.unknown()).optional(),
});

/** `POST /x402/verify` and `POST /x402/settle`. */
export const facilitatorRequestSchema = z.looseObject({
  x402Version: z.number().int(),
  paymentPayload: paymentPayloadSchema,
  paymentRequirements: paymentRequirementsSchema,
});
export type FacilitatorRequest = z.infer<typeof facilitatorRequestSchema>;

/** `VerifyResponse`: a refusal is 200 with `isValid:false` and the reason, as the stock client expects. */
export const verifyResponseSchema = z.object({
  isValid: z.boolean(),
  invalidReason: z.string().optional(),
  invalidMessage: z.string().optional(),
  payer: z.string().optional(),
});

/**
 * `SettleResponse`: `transaction` is always a string (`""` when nothing was sent) and `network`
 * always present; a refusal is 200 with `success:false`, `errorReason` and maybe `errorMessage`.
 */
export const settleResponseSchema = z.object({
  success: z.boolean(),
  errorReason: z.string().optional(),
  errorMessage: z.string().optional(),
  payer: z.string().optional(),
  transaction: z.string(),
  network: z.string(),
});

/** `GET /x402/supported`. */
export const supportedResponseSchema = z.object({
  kinds: z.array(
    z.object({
      x402Version: z.literal(2),
      scheme: z.literal('exact'),
      network: z.string(),
      extra: z.looseObject({ feePayer: z.string() }),
    }),
  ),
  extensions: z.array(z.string()),
  signers: z.record(z.string(), z.array(z.string())),
});

/** `GET /api/v1/agents/x402`: what a seller puts in its middleware (`extra` goes into each route's `accepts.extra`). */
export const x402SettingsSchema = z.object({
  facilitatorUrl: z.url(),
  network: z.string(),
  asset: z.string(),
  payTo: z.string(),
  feePayer: z.string(),
  /** `memo`: the agent's seller memo; verify and settle refuse requirements without it. */
  extra: z.object({ memo: z.string() }),
});

/** `GET /api/v1/agents/x402/payments` query. */
export const listX402PaymentsQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  cursor: z.string().min(1).max(512).optional(),
});
export type ListX402PaymentsQuery = z.infer<typeof listX402PaymentsQuerySchema>;

/** One credited payment in the listing. */
export const x402PaymentSchema = z.object({
  id: z.string(),
  amount: z.number(),
  currency: z.literal('USDC'),
  payer: z.string(),
  transaction: z.string(),
  network: z.string(),
  resource: z.string().nullable(),
  createdAt: z.string(),
});

export const x402PaymentListSchema = z.object({
  // The listing adds what the payment's refunds took back (DESIGN §28): 0 when none.
  data: z.array(x402PaymentSchema.extend({ refunded: z.number() })),
  nextCursor: z.string().nullable(),
});

/**
 * `POST /api/v1/agents/x402/purchases` (DESIGN §22): one entry of the seller's PAYMENT-REQUIRED
 * `accepts`, as the stock client hands it to a scheme client. Read field by field by the use case
 * (core/purchases.ts `judgeRequirements`, whose refusals name the field); this documents it.
 */
export const createPurchaseSchema = z.strictObject({
  x402Version: z.literal(2),
  paymentRequirements: z.strictObject({
    scheme: z.literal('exact'),
    network: z.string(),
    asset: z.string().meta({ description: "The service's USDC mint." }),
    amount: z.string().meta({ description: 'Atomic units (micro-USDC), a string of digits.' }),
    payTo: z.string().meta({ description: "The seller's wallet; not a wallet of this service (pay its agents with a charge)." }),
    maxTimeoutSeconds: z.number().int().optional(),
    extra: z.looseObject({
      feePayer: z.string().meta({ description: "The seller's facilitator, which pays the network fee; never a key of this service." }),
      memo: z.string().optional(),
    }),
  }),
  resource: z.strictObject({ url: z.url(), description: z.string().max(500).optional() }).optional(),
});

/** An x402 purchase as its agent sees it. */
export const purchaseSchema = z.object({
  id: z.string().regex(/^xp[0-9a-z]{26}a[0-9a-z]{26}$/),
  status: z.enum(['PENDING', 'SUCCESS', 'FAILED', 'EXPIRED']),
  pendingReason: z.literal('user_approval').nullable(),
  failureReason: z.string().nullable(),
  amount: z.number(),
  currency: z.literal('USDC'),
  payTo: z.string(),
  network: z.string(),
  resource: z.object({ url: z.string(), description: z.string().optional() }).nullable(),
  grantId: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  paymentPayload: z
    .object({ x402Version: z.number(), payload: z.record(z.string(), z.unknown()) })
    .nullable()
    .meta({
      description:
        'What a stock SchemeNetworkClient.createPaymentPayload returns; null while it waits for the payer, or once it ended without one.',
    }),
  transaction: z.string().nullable().meta({ description: 'The transaction the payment landed under, once SUCCESS.' }),
  receiptUrl: receiptLink(
    "Once SUCCESS (captured on chain): the purchase's receipt (`GET /api/v1/receipts/{id}`, type `x402_purchase`), a " +
      'signed record the agent or its payer reads with its own key (docs/receipts.md). Absent before.',
    'xp01jhx3k6v1f8q2n7c9m4p5r6s7a01jhx3k6v1f8q2n7c9m4p5r6s7',
  ),
});

export const purchaseListSchema = z.object({ data: z.array(purchaseSchema), nextCursor: z.string().nullable() });

/** `POST /api/v1/agents/x402/purchases/{id}/receipt`: the seller's PAYMENT-RESPONSE transaction. */
export const purchaseReceiptSchema = z.strictObject({ transaction: z.string().max(128) });
