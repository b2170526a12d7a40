/**
 * What each kind of function needs on top of the shared base (`loadConfig` in functions/config.ts
 * checks it at init): the `NEEDS_*` lists, each with the functions it is for in its comment, which
 * the generated reference (docs/reference/configuration.md) and each route's needs
 * (functions/registry/needs.generated.ts) are written from.
 */
import type { Config, ConfigKey } from './schema';

/**
 * What one function needs on top of the shared base: a variable that must be set, or alternatives
 * of which one must be set in full (e.g. the secret itself locally, its Secrets Manager ARN on AWS).
 */
export type ConfigNeed = ConfigKey | { oneOf: readonly (readonly ConfigKey[])[] };
/** What `loadConfig` checks: a list of needs, or one chosen by the parsed values (NEEDS_ADMIN_AUTH). */
export type RequiredConfig = readonly ConfigNeed[] | ((cfg: Config) => readonly ConfigNeed[]);

/** Functions that send withdrawals to the payout worker (the withdraw route, the reconciler). */
export const NEEDS_PAYOUT_QUEUE: readonly ConfigNeed[] = ['PAYOUT_QUEUE_URL'];
/** Functions that accept withdrawals (the withdraw route, the MCP server): the queue, and the chain
 * they ask whether a USDC destination has its token account (the mint, the RPC URL or its secret). */
export const NEEDS_WITHDRAWALS: readonly ConfigNeed[] = [
  ...NEEDS_PAYOUT_QUEUE,
  'USDC_MINT',
  { oneOf: [['SOLANA_RPC_URL'], ['SOLANA_RPC_URL_SECRET_ARN']] },
];
/** The x402 refund route: the queue, and the mint (a refund is never paid to the platform's own
 * addresses); not the chain: the worker creates a missing token account. */
export const NEEDS_X402_REFUNDS: readonly ConfigNeed[] = [...NEEDS_PAYOUT_QUEUE, 'USDC_MINT'];
/** The admin key itself, given directly (local) or as a Secrets Manager ARN (AWS). */
export const NEEDS_ADMIN_KEY: readonly ConfigNeed[] = [{ oneOf: [['ADMIN_KEY'], ['ADMIN_KEY_SECRET_ARN']] }];
/**
 * Functions that recognise the operator (admin routes, and get-charge's admin alternative): the admin
 * key under ADMIN_AUTH `key`; nothing under `iam`, where API Gateway's IAM authorization stands in for it.
 */
export const NEEDS_ADMIN_AUTH = (cfg: Config): readonly ConfigNeed[] => (cfg.ADMIN_AUTH === 'iam' ? [] : NEEDS_ADMIN_KEY);
/** Functions that make or check approval links (charges, the approval page). */
export const NEEDS_APPROVAL_SECRET: readonly ConfigNeed[] = [{ oneOf: [['APPROVAL_SECRET'], ['APPROVAL_SECRET_ARN']] }];
/** Functions that hand out links to the API (approval links: the charge route, the MCP server). */
export const NEEDS_PUBLIC_BASE_URL: readonly ConfigNeed[] = ['PUBLIC_BASE_URL'];
/**
 * Functions that ask the hot wallet for a signature (functions/rails/hot-wallet-signer.ts): the
 * signer function on AWS; locally the secret itself, which the in-process signer reads.
 */
export const NEEDS_HOT_WALLET_SIGNER: readonly ConfigNeed[] = [
  { oneOf: [['SIGNER_FUNCTION_NAME'], ['SOLANA_HOT_WALLET_SECRET'], ['SOLANA_HOT_WALLET_SECRET_ARN']] },
];
/** Functions that pay (worker, reconciler): both rails, as functions/rails/*.rail.ts read them. */
export const NEEDS_RAILS: readonly ConfigNeed[] = [
  { oneOf: [['SOLANA_RPC_URL'], ['SOLANA_RPC_URL_SECRET_ARN']] },
  'USDC_MINT',
  ...NEEDS_HOT_WALLET_SIGNER,
  'PAYPAL_BASE_URL',
  { oneOf: [['PAYPAL_CLIENT_ID', 'PAYPAL_CLIENT_SECRET'], ['PAYPAL_CREDENTIALS_SECRET_ARN']] },
];

/** Functions that open USDC top-ups (the create route): the mint. SOLANA_DEPOSIT_ADDRESS is the
 * operator's to set; until it is, USDC top-ups answer 503 and the watcher handles PayPal only. */
export const NEEDS_USDC_TOPUPS: readonly ConfigNeed[] = ['USDC_MINT'];
/** Functions that open or capture PayPal orders (the create route, the webhook, the watcher). */
export const NEEDS_PAYPAL_ORDERS: readonly ConfigNeed[] = [
  'PAYPAL_BASE_URL',
  { oneOf: [['PAYPAL_CLIENT_ID', 'PAYPAL_CLIENT_SECRET'], ['PAYPAL_CREDENTIALS_SECRET_ARN']] },
];
/** The PayPal webhook route: verifying needs the subscription's webhook id. */
export const NEEDS_PAYPAL_WEBHOOK: readonly ConfigNeed[] = [
  ...NEEDS_PAYPAL_ORDERS,
  { oneOf: [['PAYPAL_WEBHOOK_ID'], ['PAYPAL_WEBHOOK_ID_SECRET_ARN']] },
];
/** The top-up watcher: reads the chain (RPC URL) and drives PayPal orders. */
export const NEEDS_TOPUP_WATCHER: readonly ConfigNeed[] = [
  ...NEEDS_USDC_TOPUPS,
  { oneOf: [['SOLANA_RPC_URL'], ['SOLANA_RPC_URL_SECRET_ARN']] },
  ...NEEDS_PAYPAL_ORDERS,
];
/**
 * The x402 routes that only read the chain (verify, supported) and the agent's facilitator settings:
 * the mint and the RPC URL. No secret. The treasury (X402_PAY_TO) and the fee payer's public
 * address (SOLANA_HOT_WALLET_ADDRESS) are the operator's to set once the hot wallet exists (stage
 * `hotWalletAddress`, `x402PayTo`); until then the routes answer 503 `x402 is not available yet`
 * (functions/x402/facilitator.ts), as USDC top-ups do without a deposit wallet.
 */
export const NEEDS_X402: readonly ConfigNeed[] = ['USDC_MINT', { oneOf: [['SOLANA_RPC_URL'], ['SOLANA_RPC_URL_SECRET_ARN']] }];
/** The routes that have the hot wallet sign (x402 settle, the purchases, the MCP server): its signer too. */
export const NEEDS_X402_SETTLE: readonly ConfigNeed[] = [...NEEDS_X402, ...NEEDS_HOT_WALLET_SIGNER];
/** The signer function (functions/signer/): the hot wallet's secret, and the chain (x402 verify, a purchase's blockhash). */
export const NEEDS_SIGNER: readonly ConfigNeed[] = [
  ...NEEDS_X402,
  { oneOf: [['SOLANA_HOT_WALLET_SECRET'], ['SOLANA_HOT_WALLET_SECRET_ARN']] },
];
/** Functions that store or read webhook signing secrets: KMS on AWS, a local key otherwise. */
export const NEEDS_WEBHOOK_SECRETS: readonly ConfigNeed[] = [{ oneOf: [['WEBHOOK_KMS_KEY_ID'], ['WEBHOOK_LOCAL_SECRET_KEY']] }];
/** Functions that store answers holding a secret for idempotent replay (store/answer-seal.ts): KMS on AWS, a local key otherwise. */
export const NEEDS_SEALED_ANSWERS: readonly ConfigNeed[] = [{ oneOf: [['IDEMPOTENCY_KMS_KEY_ID'], ['IDEMPOTENCY_LOCAL_SECRET_KEY']] }];
/** The webhook dispatcher (sends to the delivery queue) and the delivery worker (changes visibility). */
export const NEEDS_WEBHOOK_QUEUE: readonly ConfigNeed[] = ['WEBHOOK_QUEUE_URL'];
/**
 * Functions that sign receipts or publish their keys (the receipt and JWKS routes, the webhook
 * dispatcher): the KMS key on AWS, the local key otherwise (functions/receipts/).
 */
export const NEEDS_RECEIPTS: readonly ConfigNeed[] = [{ oneOf: [['RECEIPT_KMS_KEY_ID'], ['RECEIPT_LOCAL_KEY']] }];
