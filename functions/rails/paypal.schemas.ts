/**
 * What the PayPal rail reads, as zod schemas: the Payouts API's answers, the OAuth2 token, the
 * credentials secret, and the rail's own checkpoint. Built once at module scope; the types are
 * inferred from them. Every API schema is `loose`: PayPal adds fields, and the rail must not
 * start refusing answers because of one it does not read.
 */
import * as z from 'zod';

/**
 * What the rail saves through its checkpoint: that a create was sent (`createSentAt`, saved right
 * before the request leaves, so a later attempt knows PayPal may hold a batch), then the batch
 * PayPal created for the payout (`batchId`). Checkpoints from before `createSentAt` carry the batch.
 */
export const paypalCheckpointSchema = z
  .object({ rail: z.literal('paypal'), batchId: z.string().min(1).max(64).optional(), createSentAt: z.string().min(1).max(40).optional() })
  .refine((c) => c.batchId !== undefined || c.createSentAt !== undefined);
export type PaypalCheckpoint = z.infer<typeof paypalCheckpointSchema>;

/** The client-credentials pair, as PAYPAL_CREDENTIALS_SECRET_ARN's secret holds it. */
export const paypalCredentialsSchema = z.object({ clientId: z.string().min(1), clientSecret: z.string().min(1) });
export type PaypalCredentials = z.infer<typeof paypalCredentialsSchema>;

/** `POST /v1/oauth2/token`. */
export const tokenResponseSchema = z.object({ access_token: z.string().min(1), expires_in: z.number().nonnegative() });

const linkSchema = z.object({ href: z.string(), rel: z.string().optional() }).loose();

/**
 * Any 4xx body. `details` and the links are how a duplicate `sender_batch_id` is recognised and
 * followed. PayPal puts the link to the original batch in the detail (`details[].link[]`) and
 * answers an empty top-level `links`; both are read, since the API's own schema has `links` too.
 */
export const paypalErrorSchema = z
  .object({
    name: z.string().optional(),
    message: z.string().optional(),
    details: z
      .array(z.object({ field: z.string().optional(), issue: z.string().optional(), link: z.array(linkSchema).optional() }).loose())
      .optional(),
    links: z.array(linkSchema).optional(),
  })
  .loose();
export type PaypalError = z.infer<typeof paypalErrorSchema>;

/** `POST /v1/payments/payouts` (201). */
export const createdBatchSchema = z.object({ batch_header: z.object({ payout_batch_id: z.string().min(1) }).loose() }).loose();

/** `GET /v1/payments/payouts/{batch id}`. */
export const payoutBatchSchema = z
  .object({
    batch_header: z
      .object({
        payout_batch_id: z.string(),
        batch_status: z.string(),
        sender_batch_header: z.object({ sender_batch_id: z.string().optional() }).loose().optional(),
      })
      .loose(),
    items: z
      .array(
        z
          .object({
            payout_item_id: z.string().optional(),
            transaction_status: z.string().optional(),
            payout_item: z.object({ sender_item_id: z.string().optional() }).loose().optional(),
            errors: z.object({ name: z.string().optional(), message: z.string().optional() }).loose().optional(),
          })
          .loose(),
      )
      .optional(),
  })
  .loose();
export type PayoutBatch = z.infer<typeof payoutBatchSchema>;
