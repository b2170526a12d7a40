/**
 * The whole service on one machine: DynamoDB Local, the table, every route's real handler behind
 * the node:http adapter, the payout rails' local stand-ins (LiteSVM, PayPal imitation), and the
 * payout pipeline (local SQS + DLQ, the real worker and reconciler handlers, see
 * payout-pipeline.ts), the webhook pipeline (stream poller, dispatcher, webhook queue,
 * delivery worker: webhook-pipeline.ts), and the kill switch's fan-out to the balance shards
 * (its own stream poller: kill-switch-fanout.ts). `npm start` and the end-to-end tests both start it here.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { handlerEntry, ROUTES } from '../../functions/api/routes';
import { config, resetForTests, useFunctionEnvironments } from '../../functions/config';
import { maxAttempts } from '../../functions/core/webhooks';
import type { RouteHandler } from '../../functions/http/handler';
import { logger } from '../../functions/observability/logger';
import { serializeError } from '../../functions/observability/serialize-error';
import type { PayoutWorker } from '../../functions/payout-worker/worker';
import { useInProcessSigner } from '../../functions/rails/hot-wallet-signer';
import type { Reconciler } from '../../functions/reconciler/reconciler';
import { type DeliveryHooks, deliverBatch, retrySchedule } from '../../functions/webhooks/delivery';
import { type DynamoDbLocal, PROJECT_ROOT, startDynamoDbLocal } from './dynamodb-local';
import { functionEnvironment } from './function-environments';
import { asFunction, currentFunction } from './function-scope';
import { createRouteHandler, type LoadedRoute } from './http-adapter';
import { startKillSwitchFanOut } from './kill-switch-fanout';
import { type LocalHandler, sendJson, startLocalServer } from './local-server';
import type { BatchHandler } from './payout-pipeline';
import { type LocalSqs, startLocalSqs, startPayoutConsumer } from './payout-pipeline';
import { type LocalRails, startLocalRails } from './rails';
import { loadLocalSigner } from './signer';
import { ensureTable } from './table';
import { createWebhookQueues, startWebhookPipeline, type WebhookQueues } from './webhook-pipeline';

// The hot-wallet signer (DESIGN §24) runs in this process: the signer function's own code
// (functions/signer/sign.ts) run as the signer function (./signer.ts), reading the local hot
// wallet's secret, behind the interface the money paths call (on AWS a Lambda function of its own).
useInProcessSigner(loadLocalSigner);

export interface LocalStackOptions {
  port?: number;
  host?: string;
  /** Throwaway database (IN_MEMORY=1). */
  inMemory?: boolean;
  dataDir?: string;
  adminKey?: string;
  tableName?: string;
  /** Reuse a running DynamoDB Local instead of starting one (tests share one). */
  dynamoEndpoint?: string;
  /**
   * Told why when the DynamoDB Local this stack started dies under it (killed, crashed): every
   * request would then answer `service busy`. `npm start` exits loudly (bin/local.ts).
   */
  onDynamoDbExit?: (reason: string) => void;
  /** Where the links the API hands out point (PUBLIC_BASE_URL); default: this server's own address. */
  publicBaseUrl?: string;
  /** Extra environment for the handlers (e.g. AUTH_CACHE_TTL_MS=0 in tests). */
  env?: Record<string, string>;
  /** Keep the local rails' chain and PayPal batches here; default .data/rails when the database
   * persists, in memory otherwise. */
  railsDataDir?: string;
  /** Payout pipeline timing (tests shorten it). */
  payouts?: {
    /** The queue's visibility timeout (default 60); PAYOUT_LEASE_SECONDS defaults to 90% of it. */
    visibilityTimeoutSeconds?: number;
    /** How often the reconciler runs (default 10 s; an EventBridge schedule on AWS). */
    reconcileIntervalMs?: number;
  };
  /** How often the charge sweeper expires due PENDING charges (default 2 s; 1 min on AWS); 0: never. */
  sweepIntervalMs?: number;
  /**
   * GET /health answers 503 `starting, retry later` until `open()`, whatever else is served: npm
   * start opens it once it has printed what a script reads (the demo user, the RPC lines), so a
   * script that waits for /health never reads the banner before it is there.
   */
  holdHealthUntilOpen?: boolean;
  /** How often the top-up watcher runs (default 2 s; 1 min on AWS); 0: never (tests run it themselves). */
  topupWatchIntervalMs?: number;
  /** Webhook pipeline timing (tests shorten it). */
  webhooks?: {
    /** The webhook queue's visibility timeout: when a crashed attempt's message reappears (default 60). */
    visibilityTimeoutSeconds?: number;
    /** How often the stream poller reads each shard (default 100 ms). */
    pollIntervalMs?: number;
  };
  /**
   * Load each route's handler at its first request instead of at start (tests: a file calls a few
   * of the ~70 routes, and loading all of them was most of a test stack's start). npm start loads
   * them all at start, so a handler that cannot load stops it there; that a handler loads with its
   * configuration is test/observability/config-init.test.ts's to prove.
   */
  loadRoutesOnFirstRequest?: boolean;
}

export interface LocalStack {
  url: string;
  port: number;
  adminKey: string;
  adminKeyGenerated: boolean;
  tableName: string;
  dynamoEndpoint: string;
  /** Local SQS: the payout queue and its dead-letter queue. */
  sqs: LocalSqs;
  /** The rails' stand-ins, with controls for tests (balances, faults, landed transactions). */
  rails: LocalRails;
  /** The webhook queue and DLQ, and hooks tests set to crash the delivery worker between steps. */
  webhooks: WebhookQueues & { hooks: DeliveryHooks };
  /** Lets GET /health answer (see `holdHealthUntilOpen`); nothing without it. */
  open(): void;
  stop(): Promise<void>;
}

/**
 * Reconciler thresholds for local runs, much shorter than on AWS so a stuck payout visibly
 * recovers within a minute; the caller's environment and `env` override them.
 */
const LOCAL_PAYOUT_DEFAULTS = { RECONCILE_PENDING_AFTER_SECONDS: '30', RECONCILE_PROCESSING_AFTER_SECONDS: '60' };

/** Re-exported for bin/local.ts, which explains a taken port to the user. */
export { PortInUseError } from './local-server';

export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const adminKeyGenerated = !opts.adminKey;
  const adminKey = opts.adminKey ?? `adm_${randomBytes(24).toString('base64url')}`;
  const tableName = opts.tableName ?? 'agent-payments-local';
  let dynamo: DynamoDbLocal | undefined;
  const stops: (() => Promise<void>)[] = [];
  // The HTTP server until it takes its place, first, in `stops`.
  let stopServer: (() => Promise<void>) | undefined;
  try {
    let endpoint = opts.dynamoEndpoint;
    if (!endpoint) {
      dynamo = await startDynamoDbLocal({
        inMemory: opts.inMemory ?? false,
        dataDir: opts.dataDir ?? `${PROJECT_ROOT}/.data/dynamodb`,
        ...(opts.onDynamoDbExit ? { onExit: opts.onDynamoDbExit } : {}),
      });
      endpoint = dynamo.endpoint;
      stops.push(() => (dynamo ? dynamo.stop() : Promise.resolve()));
    }
    await ensureTable(endpoint, tableName);

    const persistent = !opts.inMemory && !opts.dynamoEndpoint;
    const railsDataDir = opts.railsDataDir ?? (persistent ? join(PROJECT_ROOT, '.data', 'rails') : undefined);
    const rails = await startLocalRails(railsDataDir ? { dataDir: railsDataDir } : {});
    stops.unshift(() => rails.stop());

    const visibilityTimeoutSeconds = opts.payouts?.visibilityTimeoutSeconds ?? 60;
    // A failed attempt's lease must have run out when its message reappears: a little shorter.
    const leaseSeconds = Math.max(1, Math.floor(visibilityTimeoutSeconds * 0.9));
    const localDefaults = Object.fromEntries(
      Object.entries({ ...LOCAL_PAYOUT_DEFAULTS, PAYOUT_LEASE_SECONDS: String(leaseSeconds) }).filter(
        ([name]) => process.env[name] === undefined,
      ),
    );
    Object.assign(process.env, {
      TABLE_NAME: tableName,
      DYNAMODB_ENDPOINT: endpoint,
      ADMIN_KEY: adminKey,
      // Approval links are derived with it; a new one per start unless given (old links then end).
      APPROVAL_SECRET: process.env.APPROVAL_SECRET ?? randomBytes(32).toString('base64url'),
      LOCAL: '1',
      AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
      // Webhooks: receivers on this machine are allowed (never on AWS), secrets sealed with a local key.
      WEBHOOK_ALLOW_LOOPBACK: process.env.WEBHOOK_ALLOW_LOOPBACK ?? '1',
      WEBHOOK_LOCAL_SECRET_KEY:
        process.env.WEBHOOK_LOCAL_SECRET_KEY ?? localKeyFile(persistent ? join(PROJECT_ROOT, '.data', 'webhook-secret-key') : undefined),
      // Stored idempotent answers that hold a secret are sealed with it (KMS on AWS): kept beside the
      // table, so a restart can still replay them; a throwaway stack gets a throwaway key.
      IDEMPOTENCY_LOCAL_SECRET_KEY:
        process.env.IDEMPOTENCY_LOCAL_SECRET_KEY ??
        localKeyFile(persistent ? join(PROJECT_ROOT, '.data', 'idempotency-secret-key') : undefined),
      // Receipts are signed with an EC P-256 key file made once (a KMS key on AWS): kept beside the
      // table, so receipts signed before a restart still verify; a throwaway stack gets a throwaway key.
      RECEIPT_LOCAL_KEY:
        process.env.RECEIPT_LOCAL_KEY ?? localReceiptKey(persistent ? join(PROJECT_ROOT, '.data', 'receipt-signing-key.pem') : undefined),
      ...localDefaults,
      ...rails.env,
      ...opts.env,
    });
    resetForTests();
    // The redrive policy mirrors PAYOUT_MAX_RECEIVES, as the CDK stack's does.
    const sqs = await startLocalSqs({ visibilityTimeoutSeconds, maxReceives: config().PAYOUT_MAX_RECEIVES });
    stops.unshift(() => sqs.stop());
    Object.assign(process.env, sqs.env);
    resetForTests();

    const webhookQueues = await createWebhookQueues(sqs, {
      visibilityTimeoutSeconds: opts.webhooks?.visibilityTimeoutSeconds ?? 60,
      // Every attempt is a receive, plus a few for crashes, then the DLQ (as the CDK redrive
      // policy); doubled because local-aws-sqs also counts a ChangeMessageVisibility as a receive.
      maxReceives: 2 * maxAttempts(retrySchedule()) + 5,
    });
    Object.assign(process.env, webhookQueues.env);
    resetForTests();

    // The server listens first: the links the API hands out need its address (PUBLIC_BASE_URL),
    // which the route modules check when they load. Nothing is routed before they have.
    let routeHandler: LocalHandler | undefined;
    let healthHeld = opts.holdHealthUntilOpen === true;
    const server = await startLocalServer(
      (request, res) => (routeHandler && !(healthHeld && request.url.pathname === '/health') ? routeHandler(request, res) : notReady(res)),
      {
        port: opts.port ?? 3000,
        host: opts.host,
      },
    );
    stopServer = () => server.stop();
    // Given (npm start behind a proxy or on another address), or this server's own address; never
    // a previous stack's in this process.
    process.env.PUBLIC_BASE_URL = opts.publicBaseUrl ?? opts.env?.PUBLIC_BASE_URL ?? server.url;
    // The console sends a GET on another host to its own address only where requests for that
    // address arrive with its host (this server's own; behind a proxy they may not: docs/deploy.md).
    process.env.CONSOLE_HOST_REDIRECT =
      opts.env?.CONSOLE_HOST_REDIRECT ?? (opts.publicBaseUrl === undefined && opts.env?.PUBLIC_BASE_URL === undefined ? '1' : '0');
    resetForTests();
    // From here each function reads the environment its Lambda is given on AWS, not the whole of
    // this one (bin/local/function-environments.ts): a secret the stack does not give it is missing
    // here too. The environment is read again at each resetForTests, so a test may still change it.
    const ownEnvironments = useFunctionEnvironments({
      current: currentFunction,
      environment: (name) => functionEnvironment(name, process.env),
    });
    stops.push(async () => ownEnvironments());
    const routes: LoadedRoute[] = [];
    for (const spec of ROUTES) {
      const load = () => import(`../../${handlerEntry(spec).replace(/\.ts$/, '')}`) as Promise<{ handler: RouteHandler }>;
      if (opts.loadRoutesOnFirstRequest) {
        let loading: ReturnType<typeof load> | undefined;
        routes.push({
          spec,
          handler: async (event, context) => {
            // Loaded as the function (its init checks its own configuration, as a Lambda's does).
            loading ??= asFunction(spec.name, load);
            const mod = await loading;
            return asFunction(spec.name, () => mod.handler(event, context));
          },
        });
        continue;
      }
      const mod = await asFunction(spec.name, load);
      routes.push({ spec, handler: (event, context) => asFunction(spec.name, () => mod.handler(event, context)) });
    }
    routeHandler = createRouteHandler(routes);
    const worker = (await asFunction('payout-worker', () => import('../../functions/payout-worker/handler'))) as { handler: PayoutWorker };
    const reconciler = (await asFunction('reconciler', () => import('../../functions/reconciler/handler'))) as { handler: Reconciler };
    const consumer = startPayoutConsumer({
      sqs,
      worker: (event) => asFunction('payout-worker', () => worker.handler(event)),
      reconcile: () => asFunction('reconciler', () => reconciler.handler()),
      reconcileIntervalMs: opts.payouts?.reconcileIntervalMs ?? 10_000,
      onError: (where, error) => logger().error(`local ${where} invocation failed`, { error: serializeError(error) }),
    });
    stops.unshift(() => consumer.stop());
    const sweeper = (await asFunction('sweeper', () => import('../../functions/sweeper/handler'))) as { handler: () => Promise<unknown> };
    const sweeping = startInterval(opts.sweepIntervalMs ?? 2_000, () =>
      asFunction('sweeper', () => sweeper.handler()).catch((error: unknown) =>
        logger().error('local sweeper invocation failed', { error: serializeError(error) }),
      ),
    );
    stops.unshift(sweeping.stop);
    // Top-ups: PayPal's webhooks come to this server; the watcher credits USDC and polls PayPal.
    rails.paypal.setWebhookUrl(`${server.url}/api/v1/paypal/webhooks`);
    const watcher = (await asFunction('topup-watcher', () => import('../../functions/topup-watcher/handler'))) as {
      handler: () => Promise<unknown>;
    };
    const watching = startInterval(opts.topupWatchIntervalMs ?? 2_000, () =>
      asFunction('topup-watcher', () => watcher.handler()).catch((error: unknown) =>
        logger().error('local top-up watcher invocation failed', { error: serializeError(error) }),
      ),
    );
    stops.unshift(watching.stop);
    const dispatcher = (await asFunction('webhook-dispatcher', () => import('../../functions/webhook-dispatcher/handler'))) as {
      handler: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;
    };
    const delivery = (await asFunction('webhook-delivery', () => import('../../functions/webhook-delivery/handler'))) as {
      handler: BatchHandler;
    };
    const webhookHooks: DeliveryHooks = {};
    const webhooks = await startWebhookPipeline({
      dynamoEndpoint: endpoint,
      tableName,
      sqs,
      queues: webhookQueues,
      dispatch: (event) => asFunction('webhook-dispatcher', () => dispatcher.handler(event)),
      // The real handler, unless a test has set hooks (then the same code with them).
      deliver: (event) =>
        asFunction('webhook-delivery', () =>
          Object.keys(webhookHooks).length > 0 ? deliverBatch(event.Records, { hooks: webhookHooks }) : delivery.handler(event),
        ),
      pollIntervalMs: opts.webhooks?.pollIntervalMs ?? 100,
      ...(persistent ? { checkpointFile: join(PROJECT_ROOT, '.data', 'webhook-stream-checkpoints.json') } : {}),
      onError: (where, error) => logger().error(`local webhook ${where} failed`, { error: serializeError(error) }),
    });
    stops.unshift(() => webhooks.stop());
    const fanOut = (await asFunction('kill-switch-fanout', () => import('../../functions/kill-switch-fanout/handler'))) as {
      handler: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;
    };
    const killSwitch = await startKillSwitchFanOut({
      dynamoEndpoint: endpoint,
      tableName,
      handler: (event) => asFunction('kill-switch-fanout', () => fanOut.handler(event)),
      // No idle back-off here: an operator's flip must reach the shards within 2 s on a busy machine.
      pollIntervalMs: opts.webhooks?.pollIntervalMs ?? 100,
      idlePollIntervalMs: opts.webhooks?.pollIntervalMs ?? 100,
      ...(persistent ? { checkpointFile: join(PROJECT_ROOT, '.data', 'kill-switch-stream-checkpoints.json') } : {}),
      onError: (where, error) => logger().error(`local kill switch fan-out ${where} failed`, { error: serializeError(error) }),
    });
    stops.unshift(() => killSwitch.stop());
    // A kept database may hold agents from before the shards carried the kill switch's copy (its
    // stream is read from now on): copy every agent's once, as a deploy does (docs/operating/runbooks.md, "Deploying the kill switch's copy").
    if (persistent) {
      const { backfillKillSwitch } = await import('../../functions/kill-switch/fanout');
      const backfill = await backfillKillSwitch();
      if (backfill.failed.length > 0) logger().error('local kill switch backfill failed for some agents', { failed: backfill.failed });
    }
    // First to stop: no request may arrive while what it needs is going away.
    stops.unshift(stopServer);
    stopServer = undefined;
    return {
      url: server.url,
      port: server.port,
      adminKey,
      adminKeyGenerated,
      tableName,
      dynamoEndpoint: endpoint,
      sqs,
      rails,
      webhooks: { ...webhookQueues, hooks: webhookHooks },
      open: () => {
        healthHeld = false;
      },
      stop: async () => {
        for (const stop of stops) await stop();
        resetForTests();
      },
    };
  } catch (error) {
    for (const stop of stopServer ? [stopServer, ...stops] : stops) await stop().catch(() => undefined);
    throw error;
  }
}

function notReady(res: ServerResponse): void {
  sendJson(res, 503, { error: 'starting, retry later' }, { 'retry-after': '1' });
}

/**
 * A local 256-bit key (base64): the one webhook secrets are sealed with, and the one stored idempotent
 * answers are. Kept in `file` under .data/ when the database is (created on first start, mode 0600),
 * else a fresh one for a throwaway stack.
 */
/** The receipt signing key (PKCS#8 PEM, EC P-256): read from `file`, or made (and kept there when given). */
function localReceiptKey(file: string | undefined): string {
  if (file && existsSync(file)) return readFileSync(file, 'utf8');
  const pem = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  if (file) {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, pem, { mode: 0o600 });
  }
  return pem;
}

function localKeyFile(file: string | undefined): string {
  if (file && existsSync(file)) return readFileSync(file, 'utf8').trim();
  const key = randomBytes(32).toString('base64');
  if (file) {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, key, { mode: 0o600 });
  }
  return key;
}

/** Runs `tick` every `ms` (never two at once); `stop` waits for a running tick. 0 never runs it. */
function startInterval(ms: number, tick: () => Promise<unknown>): { stop: () => Promise<void> } {
  if (ms <= 0) return { stop: async () => undefined };
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(tick);
  }, ms);
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
