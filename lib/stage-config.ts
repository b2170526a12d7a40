/**
 * Per-stage deployment configuration, read from CDK context and validated once with zod.
 *
 * Where a value comes from, later wins:
 *   1. the stage's block under `stages.<stage>` in cdk.json (checked in, reviewed);
 *   2. `-c <key>=<value>` on the command line (CI passes e.g. `-c alarmEmail=…` from GitHub
 *      environment variables, so nothing environment-specific has to live in the repository).
 * The stage itself is `-c stage=<name>` (default `dev`). See docs/deploy.md for every key.
 */
import type { Node } from 'constructs';
import * as z from 'zod';

export const PAYPAL_BASE_URLS = {
  sandbox: 'https://api-m.sandbox.paypal.com',
  live: 'https://api-m.paypal.com',
} as const;

const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

/** Keys a stage block (or `-c key=value`) may set. Numbers are coerced: `-c` always passes strings. */
const stageSchema = z
  .object({
    /** Used in the stack name, secret names, logs (`STAGE`) and the `stage` metric dimension. */
    stage: z.string().regex(/^[a-z][a-z0-9-]{1,19}$/, 'lowercase letters, digits and dashes, 2-20 characters'),
    /** Pin the stack to an account/region; otherwise the deploying credentials decide. */
    account: z
      .string()
      .regex(/^\d{12}$/)
      .optional(),
    region: z.string().min(1).optional(),
    /** USDC mint on that cluster (USDC_MINT). */
    usdcMint: z.string().min(32).max(44),
    /**
     * The hot wallet's public address (SOLANA_HOT_WALLET_ADDRESS), so the withdraw route refuses it
     * as a destination up front; without it the rail still refuses it at pay time.
     */
    hotWalletAddress: z.string().min(32).max(44).optional(),
    solanaCommitment: z.enum(['processed', 'confirmed', 'finalized']).default('confirmed'),
    /** PayPal environment; chooses PAYPAL_BASE_URL. */
    paypalMode: z.enum(['sandbox', 'live']),
    /** API Gateway `$default` stage throttling: steady requests per second and burst. */
    throttleRateLimit: z.coerce.number().positive(),
    throttleBurstLimit: z.coerce.number().int().positive(),
    /** The public, unauthenticated `POST /api/v1/agents/register` route's own, lower throttle. */
    registerRateLimit: z.coerce.number().positive().default(2),
    registerBurstLimit: z.coerce.number().int().positive().default(10),
    /** Alarm notifications go to this address (an SNS e-mail subscription; confirm the e-mail once). Required in production. */
    alarmEmail: z.email().optional(),
    /** The one role, besides the payout worker's and the reconciler's, that may read the hot-wallet secret. */
    hotWalletBreakGlassRoleArn: z
      .string()
      .regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/, 'an IAM role ARN')
      .optional(),
    /** Alarm when more than this percentage of API requests answer 5xx over 5 minutes. */
    api5xxRatePercent: z.coerce.number().positive().max(100).default(1),
    /** ...but only over 5 minutes with at least this many requests: one 5xx of 1 request at 3 a.m. pages nobody. */
    api5xxMinRequests: z.coerce.number().int().min(1).default(20),
    logLevel: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'),
    logRetentionDays: z.coerce
      .number()
      .refine((d) => (LOG_RETENTION_DAYS as readonly number[]).includes(d), 'a CloudWatch Logs retention period')
      .default(30),
    /** Receives before a payout message moves to the DLQ; also given to the functions (PAYOUT_MAX_RECEIVES). */
    payoutMaxReceives: z.coerce.number().int().min(1).max(1000).default(5),
    /** Payout messages per worker invocation, and at most this many concurrent worker invocations. */
    workerBatchSize: z.coerce.number().int().min(1).max(10).default(5),
    workerMaxConcurrency: z.coerce.number().int().min(2).max(1000).default(2),
    /** How often the reconciler sweeps. */
    reconcileEveryMinutes: z.coerce.number().int().min(1).max(60).default(2),
    /** Most due PENDING charges the charge sweeper expires per run (SWEEP_MAX_PER_RUN; config.ts default). */
    sweepMaxPerRun: z.coerce.number().int().min(1).max(1_000).default(200),
    /**
     * Where the links the API hands out point (PUBLIC_BASE_URL of the routes with `approvalSecret`:
     * `<publicBaseUrl>/approve/<token>`), e.g. `https://pay.example.com` or a base path behind a CDN.
     * Required in every stage: links are never built from a request's Host header, which the client
     * chooses. https, no credentials, query or fragment; a trailing slash is dropped.
     */
    publicBaseUrl: z
      .url({
        protocol: /^https$/,
        error: (issue) =>
          issue.input === undefined
            ? 'required: the https address approval links point at (set PUBLIC_BASE_URL of the GitHub environment, or -c publicBaseUrl=…)'
            : 'an https:// URL',
      })
      .refine((value) => {
        const url = URL.canParse(value) ? new URL(value) : undefined;
        return url === undefined || (!url.username && !url.password && !url.search && !url.hash);
      }, 'an https:// URL without credentials, query or fragment')
      .transform((value) => value.replace(/\/+$/, '')),
    // Top-ups (docs/topups.md).
    /** The platform's USDC deposit wallet (SOLANA_DEPOSIT_ADDRESS; public). Unset: USDC top-ups answer 503 until it is set. */
    depositAddress: z.string().min(32).max(44).optional(),
    /** Where PayPal sends the payer after approving a top-up (TOPUP_RETURN_URL); PayPal's default page when unset. */
    topupReturnUrl: z.url({ protocol: /^https$/, error: 'an https:// URL' }).optional(),
  })
  .strict()
  .refine((c) => c.stage !== 'production' || c.alarmEmail !== undefined, {
    path: ['alarmEmail'],
    message:
      'required for production: alarms that reach nobody are no alarms (set the ALARM_EMAIL variable of the GitHub environment, or -c alarmEmail=…)',
  });

export type StageConfig = z.infer<typeof stageSchema>;

export const STAGE_CONTEXT_KEYS = Object.keys(stageSchema.shape) as (keyof StageConfig)[];

/** Reads `stage`, `stages.<stage>` and the per-key overrides from the app's context. */
export function stageConfigFromContext(node: Node): StageConfig {
  const stage = String(node.tryGetContext('stage') ?? 'dev');
  const stages = (node.tryGetContext('stages') ?? {}) as Record<string, Record<string, unknown>>;
  const block = stages[stage];
  if (!block) {
    throw new Error(`no configuration for stage "${stage}": add it under "stages" in cdk.json (known: ${Object.keys(stages).join(', ')})`);
  }
  const overrides: Record<string, unknown> = {};
  for (const key of STAGE_CONTEXT_KEYS) {
    const value = node.tryGetContext(key);
    if (value !== undefined && value !== '') overrides[key] = value;
  }
  return parseStageConfig({ ...block, ...overrides, stage });
}

export function parseStageConfig(input: Record<string, unknown>): StageConfig {
  const parsed = stageSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new Error(`invalid stage configuration: ${problems}`);
  }
  return parsed.data;
}
