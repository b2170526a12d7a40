/**
 * Receipts in the operation registry (routes.ts assembles the areas; docs/receipts.md): a
 * movement's signed receipt for either party, and the public keys anyone verifies it with.
 */
import { jwksBody, receiptBody } from '../contracts/responses/receipts';
import { refusalText as msg } from '../messages/catalogue';
import { AUTH_MESSAGES } from '../messages/credentials';
import { uses } from '../store/access';
import { BUSY, errors, ok } from './doc';
import type { DocumentedRoute } from './spec';

const EXAMPLE_KID = 'Vb3qQ0wnO5n6TqXbL0Jx1u2VQ9y6qZ0p0l7oZ0mXk3A';
const EXAMPLE_RECEIPT =
  'eyJhbGciOiJFUzI1NiIsImtpZCI6IlZiM3FRMHduTzVuNlRxWGJMMEp4MXUyVlE5eTZxWjBwMGw3b1owbVhrM0EiLCJ0eXAiOiJyZWNlaXB0K2p3dCJ9.' +
  'eyJ2IjoxLCJ0eXBlIjoiY2hhcmdlIiwiaWQiOiJjMDFqeDNrOXE3bTJuOGI0djZ0MHMxZTVyN3cyaGEwMWp4M2s5cTdtMm44YjR2NnQwczFlNXI3dzJoIiwiYW1vdW50IjoiMS41IiwiY3VycmVuY3kiOiJVU0QiLCJwYXllciI6eyJraW5kIjoidXNlciIsImlkIjoidTAxangzazlxN20ybjhiNHY2dDBzMWU1cjd3MmgifSwicGF5ZWUiOnsia2luZCI6ImFnZW50IiwiaWQiOiJhMDFqeDNrOXE3bTJuOGI0djZ0MHMxZTVyN3cyaCJ9LCJzdGF0dXMiOiJTVUNDRVNTIiwic2V0dGxlZEF0IjoiMjAyNi0xMS0yOVQxMDowMDowMC4wMDBaIiwiaWF0IjoxNzk1OTQ2NDA1fQ.' +
  'wP8zH3cM0Pq4o3oN8Ew3nS0p7cQy2mP8d1eX2YfA6rT9uVbW0xZ1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2w';

export const RECEIPT_ROUTES = [
  {
    name: 'get-receipt',
    method: 'GET',
    path: '/api/v1/receipts/{id}',
    // The caller's key; then the record the id names: a charge or purchase by id, the agent's x402 payment, refund of one or payout, the payer's top-up.
    table: uses('agentKeyLookup', 'userKeyLookup', 'getChargeById', 'getX402Payment', 'getX402Refund', 'getPayout', 'getTopup'),
    receipts: 'sign',
    operation: () => ({
      summary: 'A receipt',
      description:
        'The signed receipt of a settled money movement (docs/receipts.md): a compact JWS (ES256) anyone verifies with the keys of ' +
        '`GET /.well-known/jwks.json`. Either party of the movement may read it: the agent by x-agent-key (its charges, purchases, ' +
        'x402 payments, refunds and payouts), the payer by the account key as x-user-key (their charges, purchases, refunds and ' +
        "top-ups; a grant key is not taken). The id is the movement's own id, `<chargeId>.refund` for the refunds of a charge " +
        "(one receipt, the total), a refund of an x402 payment's own `xr…` id (its agent's alone: the buyer's wallet has no key here). " +
        "Signed when asked, from the stored record. An unknown id, a movement not settled yet and another's movement are the same 404.",
      tag: 'Receipts',
      security: [['agentKey'], ['userKey']],
      pathParams: {
        id: 'A charge id, a purchase id (`xp…`), an x402 payment id (`x402_…`), an x402 refund id (`xr…`), a payout id, a top-up id, or `<chargeId>.refund`.',
      },
      responses: {
        200: ok('The receipt.', receiptBody, {
          id: 'c01jx3k9q7m2n8b4v6t0s1e5r7w2ha01jx3k9q7m2n8b4v6t0s1e5r7w2h',
          receipt: EXAMPLE_RECEIPT,
        }),
        401: errors('The key is missing, unknown or disabled.', [msg(AUTH_MESSAGES.receipts), msg(AUTH_MESSAGES.user)]),
        404: errors('No settled movement of this id that the caller was a party to.', [msg('receiptNotFound')]),
        503: BUSY,
      },
    }),
  },
  {
    name: 'jwks',
    method: 'GET',
    path: '/.well-known/jwks.json',
    public: true,
    table: {},
    receipts: 'publish',
    operation: () => ({
      summary: 'The receipt keys',
      description:
        'The public keys (RFC 7517 JWK Set) that verify receipts: the key that signs now first, then keys that signed before a ' +
        "rotation, which stay listed. A receipt's header names its key by `kid`. Cacheable (`Cache-Control: public, max-age=300`); " +
        'stock jose reads it with `createRemoteJWKSet`.',
      tag: 'Receipts',
      security: [],
      responses: {
        200: ok('The key set.', jwksBody, {
          keys: [
            {
              kty: 'EC',
              crv: 'P-256',
              x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
              y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
              kid: EXAMPLE_KID,
              alg: 'ES256',
              use: 'sig',
            },
          ],
        }),
      },
    }),
  },
] as const satisfies readonly DocumentedRoute[];
