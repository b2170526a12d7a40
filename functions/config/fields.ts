/**
 * Every variable the service reads, as one zod object: its type, bounds and default, and (in its
 * JSDoc, or `.describe()`) what it means; `// …` comments above a group name its section. The
 * configuration reference (docs/reference/configuration.md) is generated from this source
 * (bin/docs/configuration.ts). Parsed only by functions/config.ts, the one configuration module.
 */
import * as z from 'zod';
import { AmountError, parseAmount } from '../core/money';
import { DEFAULT_RETRY_SCHEDULE_SECONDS, DELIVERY_TIMEOUT_MS } from '../core/webhooks';

const bool = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');

/** The cap on the Solana priority fee: micro-lamports per compute unit (docs/rails.md, fee policy). */
export const MAX_SOLANA_PRIORITY_FEE_MICROLAMPORTS = 1_000_000;
/** The most ACCOUNT_CREATION_FEE may be set to, micro-USDC (100 USDC): a typo, not a price, above it. */
export const MAX_ACCOUNT_CREATION_FEE = 100_000_000;

/** The most TOPUP_USDC_MIN_AMOUNT may be set to, micro-USDC (1,000 USDC): a typo, not a floor, above it. */
export const MAX_TOPUP_USDC_MIN_AMOUNT = 1_000_000_000;

/** Bounds of the compute-unit limit a payout transaction requests (docs/rails.md, fee policy). */
export const MIN_SOLANA_COMPUTE_UNIT_LIMIT = 1_000;
export const MAX_SOLANA_COMPUTE_UNIT_LIMIT = 200_000;

/** The largest amount one request may name, in currency units, unless the stage sets MAX_AMOUNT (the OpenAPI document states it). */
export const DEFAULT_MAX_AMOUNT = 1_000_000;

export const fields = z.object({
  /** DynamoDB table holding every item of the service. */
  TABLE_NAME: z.string().min(1),
  AWS_REGION: z.string().min(1).default('us-east-1').describe('The AWS region of the SDK clients: Lambda sets it; locally any value does.'),
  /** Local endpoint (DynamoDB Local); unset on AWS. */
  DYNAMODB_ENDPOINT: z.url().optional(),
  /** Plain admin key (local runs and tests). On AWS use ADMIN_KEY_SECRET_ARN instead. */
  ADMIN_KEY: z.string().min(16).optional(),
  /** Secrets Manager secret holding the admin key (AWS). */
  ADMIN_KEY_SECRET_ARN: z.string().min(1).optional(),
  /**
   * How the operator is recognised (docs/operating/runbooks.md "Admin access"). `key`: the x-admin-key header
   * (local runs, tests, stages deployed with adminAuth `key`). `iam`: API Gateway authorized the
   * request with IAM (SigV4, execute-api:Invoke) before the function ran; the function trusts that
   * verdict, ignores x-admin-key and needs no admin key. Set by the stack on the admin routes.
   */
  ADMIN_AUTH: z.enum(['key', 'iam']).default('key'),
  /** How long an auth lookup may be served from the container's memory. At most 30 s. */
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).max(30_000).default(30_000),
  /** Largest amount accepted in one charge, credit or withdrawal, in currency units. */
  MAX_AMOUNT: z.coerce.number().int().positive().max(1_000_000_000).default(DEFAULT_MAX_AMOUNT),
  /** Write shards of each agent's earned balance (see docs/data-model.md); only ever raised. */
  BALANCE_SHARDS: z.coerce.number().int().min(1).max(64).default(16),
  /** Idempotency records live this long. */
  IDEMPOTENCY_TTL_SECONDS: z.coerce.number().int().min(60).default(86_400),
  /**
   * AWS: the KMS key the stored answers that hold a secret (registration, the operator's new user,
   * a grant, a webhook endpoint, each with an Idempotency-Key) are sealed under: GenerateDataKey on
   * the create, Decrypt on a replay (store/answer-seal.ts, docs/idempotency.md).
   */
  IDEMPOTENCY_KMS_KEY_ID: z.string().min(1).optional(),
  /** Local runs and tests: the AES-256-GCM key (base64 of 32 bytes) those answers are sealed with instead of KMS. */
  IDEMPOTENCY_LOCAL_SECRET_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, { message: 'must be base64 of 32 bytes' })
    .optional(),
  /** Attempts for a transaction that DynamoDB cancels with TransactionConflict. */
  TRANSACTION_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(6),
  /** Largest accepted request body, bytes. */
  MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(16 * 1024),
  /** SQS queue the withdrawals travel on to the payout worker. */
  PAYOUT_QUEUE_URL: z.string().min(1).optional(),
  /** Local SQS endpoint; unset on AWS. */
  SQS_ENDPOINT: z.url().optional(),
  /** Receives before SQS moves a payout message to the dead-letter queue (mirrors the CDK redrive policy). */
  PAYOUT_MAX_RECEIVES: z.coerce.number().int().min(1).default(5),
  /** Reconciler: re-send PENDING payouts older than this; re-check PROCESSING ones older than this. */
  RECONCILE_PENDING_AFTER_SECONDS: z.coerce.number().int().min(1).default(120),
  RECONCILE_PROCESSING_AFTER_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(300)
    .describe('Reconciler: re-check with its rail a PROCESSING payout older than this (seconds); past it a payout counts as stuck.'),
  /** Solana: RPC endpoint, USDC mint, and the platform hot wallet (secret key, base58 or JSON
   * byte array) given directly (local) or as a Secrets Manager ARN (AWS). */
  SOLANA_RPC_URL: z.url().optional(),
  /** Secrets Manager secret holding the RPC URL (AWS): a provider URL usually carries its API key. */
  SOLANA_RPC_URL_SECRET_ARN: z.string().min(1).optional(),
  USDC_MINT: z
    .string()
    .min(32)
    .max(44)
    .optional()
    .describe(
      'The USDC mint of payouts, top-ups and x402 payments (devnet 4zMMC9…DncDU, mainnet EPjFWd…Dt1v; npm start makes a local one).',
    ),
  SOLANA_HOT_WALLET_SECRET: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Local runs: the hot wallet's secret key (base58, or a JSON byte array as solana-keygen writes it): it pays USDC payouts and x402 network fees.",
    ),
  SOLANA_HOT_WALLET_SECRET_ARN: z
    .string()
    .min(1)
    .optional()
    .describe("AWS: the Secrets Manager secret holding the hot wallet's secret key (docs/operating/stages.md, Secrets)."),
  SIGNER_FUNCTION_NAME: z
    .string()
    .min(1)
    .optional()
    .describe(
      "AWS: the hot-wallet signer function the money paths invoke for a signature (the only function that reads the hot wallet's secret; DESIGN §24). Unset locally: the signer runs in-process.",
    ),
  /** The hot wallet's public address, for functions that do not hold its secret (the withdraw
   * route refuses it as a destination). Optional: the rail refuses it anyway at pay time. */
  SOLANA_HOT_WALLET_ADDRESS: z.string().min(32).max(44).optional(),
  SOLANA_COMMITMENT: z
    .enum(['processed', 'confirmed', 'finalized'])
    .default('confirmed')
    .describe("Commitment level of payout sends and status checks (the stage's solanaCommitment)."),
  /** Priority fee of a payout transaction, micro-lamports per requested compute unit. The max is
   * the cap: a higher value fails the configuration, never a payout. */
  SOLANA_PRIORITY_FEE_MICROLAMPORTS: z.coerce.number().int().min(0).max(MAX_SOLANA_PRIORITY_FEE_MICROLAMPORTS).default(10_000),
  /** Compute units a payout transaction requests (and pays the priority fee on). A payout uses
   * ~700 on LiteSVM, ~8,500 with mainnet's classic SPL Token and Memo programs: see docs/rails.md. */
  SOLANA_COMPUTE_UNIT_LIMIT: z.coerce.number().int().min(MIN_SOLANA_COMPUTE_UNIT_LIMIT).max(MAX_SOLANA_COMPUTE_UNIT_LIMIT).default(40_000),
  /** What a USDC withdrawal with `createTokenAccount: true` is charged when the payout creates the
   * destination's token account (docs/payouts.md): decimal USDC, read exactly like an amount, parsed
   * to micro-USDC. It must cover the account's rent (~0.00204 SOL) at the SOL price, or an agent
   * could close the account, keep the rent and withdraw again at the hot wallet's expense. */
  ACCOUNT_CREATION_FEE: z
    .string()
    .default('0.50')
    .transform((text, ctx) => {
      try {
        return parseAmount(text, 'USDC', MAX_ACCOUNT_CREATION_FEE, 'ACCOUNT_CREATION_FEE');
      } catch (error) {
        if (!(error instanceof AmountError)) throw error;
        ctx.addIssue({ code: 'custom', message: error.reason, input: text });
        return z.NEVER;
      }
    }),
  /** PayPal Payouts API: base URL (sandbox, live, or the local sandbox) and OAuth2 client
   * credentials given directly (local) or as a Secrets Manager ARN holding {clientId, clientSecret}. */
  PAYPAL_BASE_URL: z.url().optional(),
  PAYPAL_CLIENT_ID: z.string().min(1).optional().describe("Local runs: the PayPal REST app's client id (with PAYPAL_CLIENT_SECRET)."),
  PAYPAL_CLIENT_SECRET: z.string().min(1).optional().describe("Local runs: the PayPal REST app's client secret (with PAYPAL_CLIENT_ID)."),
  PAYPAL_CREDENTIALS_SECRET_ARN: z
    .string()
    .min(1)
    .optional()
    .describe(
      'AWS: the Secrets Manager secret holding {"clientId", "clientSecret"} of the PayPal REST app (sandbox or live, as the stage\'s paypalMode).',
    ),
  LOG_LEVEL: z
    .enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT'])
    .default('INFO')
    .describe("Least level logged: the stage's logLevel on AWS; WARN under npm start unless set."),
  /** Stage name, for logs and metrics. */
  STAGE: z.string().default('local'),
  /** Local runs: AWS SDK needs some credentials even for DynamoDB Local. */
  LOCAL: bool.default(false),
  /** Payout worker: how long one attempt holds a payout it is driving (a lease, renewed at each
   * rail checkpoint). Must exceed the worker's timeout and stay within the queue's visibility
   * timeout, so a crashed attempt's payout is free again when its message reappears. */
  PAYOUT_LEASE_SECONDS: z.coerce.number().int().min(1).max(43_200).default(90),
  /** Reconciler: most payouts of each kind (PENDING to re-send, PROCESSING to drive) per run. */
  RECONCILE_MAX_PER_RUN: z.coerce.number().int().min(1).max(1_000).default(100),
  /** The key approval links are derived with (use-cases/charges/approval-token.ts): given directly (local)
   * or as a Secrets Manager ARN (AWS). Changing it invalidates links not yet used. */
  APPROVAL_SECRET: z.string().min(32).optional(),
  APPROVAL_SECRET_ARN: z
    .string()
    .min(1)
    .optional()
    .describe('AWS: the Secrets Manager secret holding the approval-link key (docs/operating/runbooks.md, Rotating the approval secret).'),
  /** Where the links the API hands out point (`<base>/approve/<token>`): required by every function
   * that makes one (NEEDS_PUBLIC_BASE_URL), never derived from a request's Host header. The CDK
   * stack sets the stage's https `publicBaseUrl`; `npm start` its own address. */
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** The console (docs/console.md): whether anyone may sign up with a passkey (`closed`: only payers the operator makes). */
  CONSOLE_SIGNUP: z.enum(['open', 'closed']).default('open'),
  CONSOLE_HOST_REDIRECT: bool
    .default(false)
    .describe(
      "The console sends a GET that arrives with another Host than PUBLIC_BASE_URL's to the public address, where its cookie and passkeys live. " +
        'Only where requests for the public address arrive with its own host as Host: the stack sets it when the public address is its custom domain ' +
        '(domainName, no publicBaseUrl), npm start when it serves its own address. Never behind a CDN, which sends the origin’s host: every request would be redirected, forever (issue 38).',
    ),
  CONSOLE_RP_ID: z
    .string()
    .regex(/^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'a host name')
    .optional()
    .describe(
      "The passkeys' relying party id: PUBLIC_BASE_URL's host unless set. A passkey works only under the id it was made for, so set it to a " +
        'domain the public host is under (example.com for pay.example.com) to keep passkeys when the console moves to another host under it (docs/console.md, "Moving the console").',
    ),
  /** The service's name as payers read it (the approval page, the console, passkeys' relying party). */
  SERVICE_NAME: z.string().min(1).max(64).default('Agent Payment Service'),
  /** Sweeper: most due PENDING charges expired per run. */
  SWEEP_MAX_PER_RUN: z.coerce.number().int().min(1).max(1_000).default(200),
  // Top-ups (docs/topups.md).
  /** The platform's USDC deposit wallet (public address; its token account receives top-ups). */
  SOLANA_DEPOSIT_ADDRESS: z.string().min(32).max(44).optional(),
  /** PayPal's id of the webhook subscription (verify-webhook-signature needs it): directly (local)
   * or as a Secrets Manager ARN (AWS). */
  PAYPAL_WEBHOOK_ID: z.string().min(1).optional(),
  PAYPAL_WEBHOOK_ID_SECRET_ARN: z.string().min(1).optional().describe('AWS: the Secrets Manager secret holding PAYPAL_WEBHOOK_ID.'),
  /** Where PayPal sends the payer after approving (the app's own page); PayPal's default when unset. */
  TOPUP_RETURN_URL: z.url().optional(),
  /** How long a top-up waits for its payment. PayPal orders are approvable for about 3 hours. */
  TOPUP_USDC_EXPIRY_SECONDS: z.coerce.number().int().min(60).max(604_800).default(3_600),
  TOPUP_USD_EXPIRY_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(259_200)
    .default(10_800)
    .describe('How long a USD top-up (a PayPal order) waits to be approved and paid, seconds.'),
  /** How long after a USD top-up's window a PayPal capture may stay PENDING before the top-up FAILS (alarmed). */
  TOPUP_CAPTURE_PENDING_MAX_SECONDS: z.coerce.number().int().min(0).max(2_592_000).default(86_400),
  /** Watcher: most pending top-ups looked at per run, and most deposit-account signatures scanned. */
  TOPUP_WATCH_MAX_PER_RUN: z.coerce.number().int().min(1).max(1_000).default(200),
  TOPUP_DEPOSIT_SCAN_MAX: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(1_000)
    .describe('Watcher: most signatures of the deposit wallet scanned per run.'),
  /** Watcher: most signatures carrying one pending top-up's reference read per run (newer than its place). */
  TOPUP_REFERENCE_SCAN_MAX: z.coerce.number().int().min(1).max(10_000).default(1_000),
  /**
   * The least a transfer carrying the reference of a USDC top-up that named no amount must bring to
   * complete it (decimal USDC, parsed to micro-USDC): a smaller one (dust anyone can send with a
   * public reference) credits nobody and is recorded unmatched (docs/topups.md).
   */
  TOPUP_USDC_MIN_AMOUNT: z
    .string()
    .default('1')
    .transform((text, ctx) => {
      try {
        return parseAmount(text, 'USDC', MAX_TOPUP_USDC_MIN_AMOUNT, 'TOPUP_USDC_MIN_AMOUNT');
      } catch (error) {
        if (!(error instanceof AmountError)) throw error;
        ctx.addIssue({ code: 'custom', message: error.reason, input: text });
        return z.NEVER;
      }
    }),
  // x402 (docs/x402.md): the service as an x402 v2 facilitator for its agents.
  /** CAIP-2 id of the Solana network settlements happen on (devnet's by default; mainnet in production). */
  X402_NETWORK: z
    .string()
    .regex(/^solana:[1-9A-HJ-NP-Za-km-z]{32}$/, { message: 'must be a CAIP-2 Solana network id' })
    .default('solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1'),
  /** The treasury: the wallet x402 payments go to (`payTo`); its USDC token account must exist. */
  X402_PAY_TO: z.string().min(32).max(44).optional(),
  /** Smallest x402 payment credited, in USDC (a decimal string; default 0.01). */
  X402_MIN_AMOUNT: z
    .string()
    .regex(/^\d+(\.\d{1,6})?$/, { message: 'must be a decimal USDC amount with at most 6 decimals' })
    .default('0.01'),
  /** Reconciler: a settlement still PENDING this long after it began is looked up on chain (seconds). */
  X402_RECONCILE_AFTER_SECONDS: z.coerce.number().int().min(1).default(60),
  /**
   * Reconciler: a settlement credited at `confirmed` is checked again at `finalized` once this old
   * (seconds); not finalized this long after its credit (X402_FINALITY_MAX_SECONDS), or failed on
   * chain, it is a mismatch: logged for the X402FinalityMismatch alarm.
   */
  X402_FINALITY_AFTER_SECONDS: z.coerce.number().int().min(0).default(60),
  X402_FINALITY_MAX_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(900)
    .describe('Reconciler: a settlement not finalized this long after its credit (seconds) is a mismatch (X402FinalityMismatch).'),
  /**
   * What one settlement may cost the fee payer (the hot wallet), whose fee the buyer's transaction
   * sets: its compute unit limit, its compute unit price (µlamports per unit) and its signatures
   * (5,000 lamports each). The stock client asks 20,000 units at 1 µlamport with 2 signatures; the
   * defaults cap a settlement at 20,000 lamports (docs/x402.md, "The fee payer's spend").
   */
  X402_MAX_COMPUTE_UNITS: z.coerce.number().int().min(1).max(1_400_000).default(200_000),
  X402_MAX_PRIORITY_FEE_MICROLAMPORTS: z.coerce
    .number()
    .int()
    .min(0)
    .max(5_000_000)
    .default(50_000)
    .describe("The highest compute unit price (µlamports per unit) a buyer's x402 transaction may set: the fee payer pays it."),
  X402_MAX_SIGNATURES: z.coerce
    .number()
    .int()
    .min(2)
    .max(4)
    .default(2)
    .describe("The most signatures (5,000 lamports each) a buyer's x402 transaction may carry: the fee payer pays them."),
  // Webhooks (docs/webhooks.md).
  /** SQS queue the dispatcher sends one message per (event, endpoint) to, for the delivery worker. */
  WEBHOOK_QUEUE_URL: z.string().min(1).optional(),
  /** AWS: the KMS key webhook signing secrets are encrypted under (Encrypt on create, Decrypt on delivery). */
  WEBHOOK_KMS_KEY_ID: z.string().min(1).optional(),
  /** Local runs and tests: the AES-256-GCM key (base64 of 32 bytes) secrets are sealed with instead of KMS. */
  WEBHOOK_LOCAL_SECRET_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, { message: 'must be base64 of 32 bytes' })
    .optional(),
  /** Local runs only: endpoints on loopback (http://127.0.0.1) are allowed. Never set on AWS. */
  WEBHOOK_ALLOW_LOOPBACK: bool.default(false),
  WEBHOOK_RETRY_SCHEDULE_SECONDS: z
    .string()
    .regex(/^\d+(,\d+)*$/, { message: 'must be comma-separated whole seconds' })
    .transform((v) => v.split(',').map(Number))
    .pipe(z.array(z.number().int().min(0).max(43_200)).min(1).max(50))
    .optional()
    .describe(
      'Seconds between attempts after each failure (comma-separated; one more attempt than entries). ' +
        `Unset: ${DEFAULT_RETRY_SCHEDULE_SECONDS.join(',')} (core/webhooks.ts), which spans more than 24 h.`,
    ),
  /** How long a receiver has to answer, ms (core/webhooks.ts DELIVERY_TIMEOUT_MS; tests shorten it). */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(10_000).default(DELIVERY_TIMEOUT_MS),
  // Receipts (docs/receipts.md).
  /** AWS: the KMS asymmetric key (ECC_NIST_P256, SIGN_VERIFY) receipts are signed with now; its private key never leaves KMS. */
  RECEIPT_KMS_KEY_ID: z.string().min(1).optional(),
  /**
   * AWS: KMS keys that signed receipts before a rotation (comma-separated ids or ARNs): no longer
   * used to sign, still listed in /.well-known/jwks.json so their receipts keep verifying
   * (docs/operating/runbooks.md "Receipt signing key").
   */
  RECEIPT_PREVIOUS_KMS_KEY_IDS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((id) => id.trim())
        .filter((id) => id !== ''),
    )
    .optional(),
  /** Local runs and tests: the EC P-256 private key (PKCS#8 PEM) receipts are signed with instead of KMS (`npm start` keeps it in .data/receipt-signing-key.pem). */
  RECEIPT_LOCAL_KEY: z
    .string()
    .refine((v) => v.includes('-----BEGIN PRIVATE KEY-----'), { message: 'must be a PKCS#8 PEM private key' })
    .optional(),
});
