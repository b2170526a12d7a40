/**
 * Per-stage deployment configuration, read from CDK context and validated once with zod.
 *
 * Where a value comes from, later wins:
 *   1. the stage's block under `stages.<stage>` in cdk.json (checked in, reviewed);
 *   2. `-c <key>=<value>` on the command line (CI passes e.g. `-c alarmEmail=…` from GitHub
 *      environment variables, so nothing environment-specific has to live in the repository).
 * The stage itself is `-c stage=<name>` (default `dev`). See docs/operating/stages.md for every key.
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

/**
 * Why API Gateway would refuse this certificate for a regional custom domain in `region` (it serves
 * only a certificate of its own region), or undefined. Also checked by lib/http-api.ts against the
 * stack's region when the synth knows it.
 */
export function certificateRegionProblem(certificateArn: string, region: string): string | undefined {
  const own = certificateArn.split(':')[3];
  return own === region
    ? undefined
    : `a certificate of ${own}, but the stack deploys to ${region}: a regional API serves only a certificate of its own region (request or import it there)`;
}

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
    /**
     * x402 (docs/x402.md): the treasury x402 payments go to (X402_PAY_TO; its USDC token account must
     * exist). Unset: the hot wallet (`hotWalletAddress`), so x402 receipts fund USDC withdrawals.
     * With neither set the x402 routes answer 503 until the operator sets them.
     */
    x402PayTo: z.string().min(32).max(44).optional(),
    /** x402's CAIP-2 network id (X402_NETWORK). Unset: mainnet's for the mainnet USDC mint, devnet's otherwise. */
    x402Network: z
      .string()
      .regex(/^solana:[1-9A-HJ-NP-Za-km-z]{32}$/, 'a CAIP-2 Solana network id')
      .optional(),
    /** PayPal environment; chooses PAYPAL_BASE_URL. */
    paypalMode: z.enum(['sandbox', 'live']),
    /** API Gateway `$default` stage throttling: steady requests per second and burst. */
    throttleRateLimit: z.coerce.number().positive(),
    throttleBurstLimit: z.coerce.number().int().positive(),
    /** The public, unauthenticated `POST /api/v1/agents/register` route's own, lower throttle. */
    registerRateLimit: z.coerce.number().positive().default(2),
    registerBurstLimit: z.coerce.number().int().positive().default(10),
    /**
     * Every other public route's own throttle (RouteSpec `public: true` without an entry of its own
     * in lib/http-api.ts ROUTE_THROTTLES): approval page and decision, PayPal webhook, health, the
     * OpenAPI document, not-found; consent and x402 routes get it by being marked public.
     */
    publicRouteRateLimit: z.coerce.number().positive().default(10),
    publicRouteBurstLimit: z.coerce.number().int().positive().default(20),
    /**
     * The console's pages and their assets (`ANY /console`, `ANY /console/{proxy+}`): every signed-in
     * payer's page views share it. A view is one request (the stylesheet and script are cached for a
     * year after the first), so 15/s serves some hundreds of payers clicking at once, below the
     * stage's rate like every public route (docs/operating/stages.md, "Throttles").
     */
    consolePageRateLimit: z.coerce.number().positive().default(15),
    consolePageBurstLimit: z.coerce.number().int().positive().default(30),
    /**
     * The console's sign-in and sign-up posts (the account key's form, the passkey ceremonies): one
     * or two requests a sign-in, a few a payer a day. Apart from the pages, so a flood of attempts
     * from many addresses (the function's own limits count per address) slows sign-ins, never the
     * pages of payers already signed in.
     */
    consoleSignInRateLimit: z.coerce.number().positive().default(5),
    consoleSignInBurstLimit: z.coerce.number().int().positive().default(10),
    /** Alarm notifications go to this address (an SNS e-mail subscription; confirm the e-mail once). Required in production. */
    alarmEmail: z.email().optional(),
    /** The one role, besides the payout worker's and the reconciler's, that may read the hot-wallet secret. */
    hotWalletBreakGlassRoleArn: z
      .string()
      .regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/, 'an IAM role ARN')
      .optional(),
    /**
     * How the operator's routes (`/api/v1/admin/**`) are authorized (docs/operating/runbooks.md "Admin access").
     * `iam` (the default): API Gateway IAM authorization; the caller signs with SigV4 and needs
     * execute-api:Invoke on them (the managed policy of the `AdminApiPolicyArn` output); their functions
     * get no admin key, and get-charge no longer takes one. `key`: the static x-admin-key header,
     * checked against the AdminKey secret, as `npm start` does. Production refuses `key`.
     */
    adminAuth: z.enum(['iam', 'key']).default('iam'),
    /**
     * Under `iam`: roles of this stack's own account the admin policy is attached to, by name (IAM
     * attaches a customer managed policy only within its account). `-c adminRoleNames=a,b` or a JSON
     * list in cdk.json. Other operators get it attached by whoever manages their access: docs/operating/runbooks.md, "Admin access".
     */
    adminRoleNames: z.preprocess(
      (v) =>
        typeof v === 'string'
          ? v
              .split(',')
              .map((name) => name.trim())
              .filter(Boolean)
          : v,
      z.array(z.string().regex(/^[\w+=.@-]{1,64}$/, 'an IAM role name (not an ARN; no commas)')).default([]),
    ),
    /** Alarm when more than this percentage of API requests answer 5xx over 5 minutes. */
    api5xxRatePercent: z.coerce.number().positive().max(100).default(1),
    /** ...but only over 5 minutes with at least this many requests: one 5xx of 1 request at 3 a.m. pages nobody (the 429 rate alarm too). */
    api5xxMinRequests: z.coerce.number().int().min(1).default(20),
    /** Alarm when more than this percentage of API requests are throttled (429) over 5 minutes. */
    api429RatePercent: z.coerce.number().positive().max(100).default(5),
    logLevel: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'),
    logRetentionDays: z.coerce
      .number()
      .refine((d) => (LOG_RETENTION_DAYS as readonly number[]).includes(d), 'a CloudWatch Logs retention period')
      .default(30),
    /** The receipt signing key's generation: raised by one to rotate it (docs/operating/runbooks.md "Receipt signing key"). */
    receiptKeyGeneration: z.coerce.number().int().min(1).max(99).default(1),
    /** ARNs of the receipt keys a rotation replaced: still published in /.well-known/jwks.json (comma-separated with `-c`). */
    receiptPreviousKeyArns: z
      .union([
        z.array(z.string().startsWith('arn:')),
        z.string().transform((v) =>
          v
            .split(',')
            .map((a) => a.trim())
            .filter((a) => a !== ''),
        ),
      ])
      .pipe(z.array(z.string().startsWith('arn:')))
      .default([]),
    /** Receives before a payout message moves to the DLQ; also given to the functions (PAYOUT_MAX_RECEIVES). */
    payoutMaxReceives: z.coerce.number().int().min(1).max(1000).default(5),
    /** Payout messages per worker invocation, and at most this many concurrent worker invocations. */
    workerBatchSize: z.coerce.number().int().min(1).max(10).default(5),
    workerMaxConcurrency: z.coerce.number().int().min(2).max(1000).default(2),
    /**
     * Reserved concurrency (capacity no other function can take, and a ceiling) for the functions
     * below. `false` reserves none: an account keeps at least 100 unreserved, so one whose quota is
     * under 100 + the sum (new accounts may start at 10) refuses the deploy.
     */
    reserveConcurrency: z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]).default(true),
    /** The payout worker's; at least workerMaxConcurrency (the queue mapping's own cap, or it is throttled). Default: workerMaxConcurrency. */
    payoutWorkerReservedConcurrency: z.coerce.number().int().min(1).max(1000).optional(),
    /** The webhook delivery worker's reserved concurrency and its queue mapping's maximum concurrency. */
    webhookDeliveryConcurrency: z.coerce.number().int().min(2).max(1000).default(20),
    /**
     * The webhook dispatcher's; none by default: it runs one invocation per stream shard, a number
     * the table's partitions decide, and a reservation below it would stall the stream.
     */
    webhookDispatcherReservedConcurrency: z.coerce.number().int().min(1).max(1000).optional(),
    /** The scheduled functions': one run at a time each (a run ends before the next tick anyway). */
    reconcilerReservedConcurrency: z.coerce.number().int().min(1).max(10).default(1),
    sweeperReservedConcurrency: z.coerce.number().int().min(1).max(10).default(1),
    topupWatcherReservedConcurrency: z.coerce.number().int().min(1).max(10).default(1),
    /** The hour (UTC) the daily ledger audit runs (lib/ledger-audit.ts): pick the quietest, money moving during a scan is noise. */
    ledgerAuditHourUtc: z.coerce.number().int().min(0).max(23).default(3),
    /** How often the reconciler sweeps. */
    reconcileEveryMinutes: z.coerce.number().int().min(1).max(60).default(2),
    /** Most due PENDING charges the charge sweeper expires per run (SWEEP_MAX_PER_RUN; config.ts default). */
    sweepMaxPerRun: z.coerce.number().int().min(1).max(1_000).default(200),
    /**
     * Where the links the API hands out point (PUBLIC_BASE_URL of the routes with `publicLinks`:
     * `<publicBaseUrl>/approve/<token>`), e.g. a base path behind a CDN. Never a request's Host
     * header, which the client chooses. https, no credentials, query or fragment; a trailing slash
     * is dropped. Unset: `https://<domainName>` with a custom domain, else the API's own address
     * (its execute-api URL, known only at deploy), so a first deploy hands out working links.
     */
    publicBaseUrl: z
      .url({ protocol: /^https$/, error: 'an https:// URL' })
      .refine((value) => {
        const url = URL.canParse(value) ? new URL(value) : undefined;
        return url === undefined || (!url.username && !url.password && !url.search && !url.hash);
      }, 'an https:// URL without credentials, query or fragment')
      .transform((value) => value.replace(/\/+$/, ''))
      .optional(),
    /**
     * The API's custom domain (an API Gateway regional domain name mapped to its `$default` stage),
     * e.g. `pay.example.com`; with `certificateArn`. The DNS record pointing at it is the
     * operator's (outputs CustomDomainTarget, CustomDomainHostedZoneId; docs/operating/first-deploy.md "The public address").
     */
    domainName: z
      .string()
      .regex(
        /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
        'a host name, e.g. pay.example.com (no https://, no path)',
      )
      .optional(),
    /**
     * The console's passkeys' relying party id (CONSOLE_RP_ID): the public address's host unless set.
     * A passkey works only under the id it was made for; a parent domain (`example.com` for
     * `pay.example.com`) keeps them when the console moves to another host under it. Needs
     * publicBaseUrl or domainName (an execute-api host has no parent a browser accepts).
     */
    rpId: z
      .string()
      .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'a domain name, e.g. example.com (no https://, no path)')
      .optional(),
    /** The ACM certificate of `domainName`, issued in the stack's region (a regional endpoint serves no other). */
    certificateArn: z
      .string()
      .regex(
        /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[\w-]+$/,
        'an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>)',
      )
      .optional(),
    // Top-ups (docs/topups.md).
    /** The platform's USDC deposit wallet (SOLANA_DEPOSIT_ADDRESS; public). Unset: USDC top-ups answer 503 until it is set. */
    depositAddress: z.string().min(32).max(44).optional(),
    /** Where PayPal sends the payer after approving a top-up (TOPUP_RETURN_URL); PayPal's default page when unset. */
    topupReturnUrl: z.url({ protocol: /^https$/, error: 'an https:// URL' }).optional(),
  })
  .strict()
  .refine((c) => c.payoutWorkerReservedConcurrency === undefined || c.payoutWorkerReservedConcurrency >= c.workerMaxConcurrency, {
    path: ['payoutWorkerReservedConcurrency'],
    message: 'at least workerMaxConcurrency: the payout queue mapping would invoke more workers than may run, and be throttled',
  })
  .refine((c) => c.stage !== 'production' || c.adminAuth === 'iam', {
    path: ['adminAuth'],
    message: 'production authorizes the admin routes with IAM: a static key on the public internet must not create money there',
  })
  .refine((c) => c.adminAuth === 'iam' || c.adminRoleNames.length === 0, {
    path: ['adminRoleNames'],
    message: 'attaches the IAM admin policy, which exists only with adminAuth iam',
  })
  .refine((c) => c.domainName === undefined || c.certificateArn !== undefined, {
    path: ['domainName'],
    message: 'needs certificateArn: the ACM certificate API Gateway serves it with',
  })
  .refine((c) => c.rpId === undefined || publicHost(c) === undefined || hostIsUnder(publicHost(c) ?? '', c.rpId), {
    path: ['rpId'],
    message:
      'must be the public address’s host or a domain it is under (publicBaseUrl’s host, else domainName): a browser refuses any other',
  })
  .refine((c) => c.rpId === undefined || publicHost(c) !== undefined, {
    path: ['rpId'],
    message: 'needs publicBaseUrl or domainName: the API’s own execute-api host is under no domain a browser accepts as a relying party',
  })
  .refine((c) => c.certificateArn === undefined || c.domainName !== undefined, {
    path: ['certificateArn'],
    message: 'needs domainName: the custom domain it is the certificate of',
  })
  .superRefine((c, ctx) => {
    const problem = c.certificateArn && c.region ? certificateRegionProblem(c.certificateArn, c.region) : undefined;
    if (problem) ctx.addIssue({ code: 'custom', path: ['certificateArn'], message: problem });
  })
  // One transfer, one credit (docs/topups.md): the watcher credits what reaches the deposit wallet and
  // x402 settle what reaches the treasury (x402PayTo, by default the hot wallet). One wallet for both
  // would let one transfer complete a top-up and pay a seller. functions/config.ts refuses it too.
  .refine((c) => c.depositAddress === undefined || c.depositAddress !== (c.x402PayTo ?? c.hotWalletAddress), {
    path: ['depositAddress'],
    message:
      'must not be the x402 treasury (x402PayTo, or hotWalletAddress while x402PayTo is unset): a transfer to it could be credited ' +
      'both as a top-up and as an x402 payment; give top-ups a deposit wallet of their own, or set x402PayTo to another wallet',
  })
  .refine((c) => c.stage !== 'production' || c.alarmEmail !== undefined, {
    path: ['alarmEmail'],
    message:
      'required for production: alarms that reach nobody are no alarms (set the ALARM_EMAIL variable of the GitHub environment, or -c alarmEmail=…)',
  });

export type StageConfig = z.infer<typeof stageSchema>;

/** The host of the address the stage's links and console are at, where the synth knows it (not the execute-api one). */
function publicHost(c: { publicBaseUrl?: string | undefined; domainName?: string | undefined }): string | undefined {
  if (c.publicBaseUrl && URL.canParse(c.publicBaseUrl)) return new URL(c.publicBaseUrl).hostname;
  return c.domainName;
}

const hostIsUnder = (host: string, domain: string): boolean => host === domain || host.endsWith(`.${domain}`);

/** A function's reserved concurrency as the stage wants it: none when `reserveConcurrency` is off. */
export const reservedConcurrency = (config: StageConfig, value: number | undefined): number | undefined =>
  config.reserveConcurrency ? value : undefined;

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
