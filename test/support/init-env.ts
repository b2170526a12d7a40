/**
 * Placeholders for everything a function needs at init beyond the table (functions/config.ts
 * `NEEDS_*`): with these, any handler module or bundle loads. Nothing here is contacted by a load.
 */
export const INIT_ENV = {
  PAYOUT_QUEUE_URL: 'http://127.0.0.1:1/000000000000/placeholder-payouts',
  ADMIN_KEY: 'placeholder-admin-key-0123456789',
  APPROVAL_SECRET: 'placeholder-approval-secret-0123456789abcdef',
  SOLANA_RPC_URL: 'http://127.0.0.1:1',
  USDC_MINT: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
  SOLANA_HOT_WALLET_SECRET: 'placeholder-hot-wallet',
  PAYPAL_BASE_URL: 'http://127.0.0.1:1',
  PAYPAL_CLIENT_ID: 'placeholder-client',
  PAYPAL_CLIENT_SECRET: 'placeholder-secret',
  PAYPAL_WEBHOOK_ID: 'placeholder-webhook-id',
  WEBHOOK_QUEUE_URL: 'http://127.0.0.1:1/000000000000/placeholder-webhooks',
  WEBHOOK_LOCAL_SECRET_KEY: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
  IDEMPOTENCY_LOCAL_SECRET_KEY: 'AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=',
  PUBLIC_BASE_URL: 'https://pay.placeholder.example.com',
  // Only its form is checked at init; the signer reads it when it first signs.
  RECEIPT_LOCAL_KEY: '-----BEGIN PRIVATE KEY-----\nplaceholder\n-----END PRIVATE KEY-----\n',
} as const;
