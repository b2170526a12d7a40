/**
 * The receipt routes' bodies (docs/receipts.md), registered as components
 * (contracts/response.schemas.ts has the registry), and where a movement's receipt is read:
 * `receiptUrlOf`, which every answer that links a receipt (a settled charge, purchase or payout,
 * a refund, the console's statement) builds its link with.
 */
import * as z from 'zod';
import { type ReceiptType, refundReceiptId } from '../../core/receipts';
import { component } from '../response.schemas';

/** The path of receipt `id` (`GET /api/v1/receipts/{id}`). */
export const receiptPath = (id: string): string => `/api/v1/receipts/${encodeURIComponent(id)}`;

/**
 * The receipt link of a movement: `kind` is the receipt's type and `id` the movement's own id (a
 * charge's refund's receipt is named after its charge, `<chargeId>.refund`; an x402 refund's is its
 * own `xr…` id). Absolute on `baseUrl` (the API's public address, as every link an answer hands
 * out); a path when it is ''.
 */
export const receiptUrlOf = (kind: ReceiptType, id: string, baseUrl = ''): string =>
  `${baseUrl}${receiptPath(kind === 'refund' ? refundReceiptId(id) : id)}`;

/**
 * A receipt link in an answer (DESIGN §27): absolute on the API's public address, present only once
 * the receipt exists; `exampleId` the receipt id its example shows.
 */
export const receiptLink = (description: string, exampleId: string) =>
  z
    .url()
    .optional()
    .meta({ description, examples: [`https://api.example.com${receiptPath(exampleId)}`] });

export const receiptBody = component(
  'Receipt',
  z.strictObject({
    id: z.string().meta({
      description: "The receipt's id: the movement's own id (`<chargeId>.refund` for a charge's refunds; an x402 refund's own `xr…` id).",
    }),
    receipt: z.string().meta({
      description:
        'The receipt: a compact JWS (ES256, header `{alg, kid, typ: "receipt+jwt"}`), verifiable with the keys of ' +
        '`GET /.well-known/jwks.json`; its payload is `{v, type, id, amount, currency, payer, payee, status, settledAt, ' +
        'grantId?, transaction?, resource?, iat}` (docs/receipts.md).',
    }),
  }),
);

export const jwksBody = component(
  'ReceiptKeySet',
  z.strictObject({
    keys: z
      .array(
        z.strictObject({
          kty: z.literal('EC'),
          crv: z.literal('P-256'),
          x: z.string(),
          y: z.string(),
          kid: z.string().meta({ description: "The key's RFC 7638 thumbprint: a receipt's header names it." }),
          alg: z.literal('ES256'),
          use: z.literal('sig'),
        }),
      )
      .meta({ description: 'The key that signs now first, then keys that signed before a rotation (still listed).' }),
  }),
);
