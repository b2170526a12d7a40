/**
 * The synthesized stack: routes, stage, functions, table, queues, worker, reconciler, sweeper,
 * secrets, environment and alarms. IAM has its own file (iam.test.ts), bundles theirs (bundles.int.test.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { handlerEntry, ROUTES, readsAdminKey } from '../../functions/api/routes';
import { config as readConfig, resetForTests } from '../../functions/config';
import {
  HOT_WALLET_LAMPORTS_METRIC,
  LEDGER_AUDIT_PROBLEMS_METRIC,
  METRICS_NAMESPACE,
  STUCK_PAYOUTS_METRIC,
  SWEEPER_LAG_METRIC,
  TRANSFER_CREDITED_ELSEWHERE_LOG_MESSAGE,
  X402_FEE_PAYER_LAMPORTS_METRIC,
  X402_PURCHASES_UNSEARCHED_METRIC,
} from '../../functions/observability/metric-names';
import { metrics } from '../../functions/observability/metrics';
import { OPERATIONS } from '../../functions/operations/all';
import type { Credentials } from '../../functions/operations/operation';
import { GSI1, GSI2, TABLE_KEYS, TTL_ATTRIBUTE } from '../../functions/store/table';
import { API_PARTS, apiPart } from '../../lib/api-parts';
import { PROJECT_ROOT } from '../../lib/bundling';
import { SWEEPER_ENTRY } from '../../lib/charge-sweeper';
import { routeConstructId, routeKey } from '../../lib/http-api';
import { LEDGER_AUDIT_ENTRY } from '../../lib/ledger-audit';
import {
  HOT_WALLET_MIN_LAMPORTS,
  heldAtLimitPeriod,
  LEDGER_AUDIT_WINDOW_HOURS,
  MONEY_ROUTES,
  SWEEPER_MAX_LAG,
  X402_FEE_SPEND_ALARM_LAMPORTS_PER_HOUR,
} from '../../lib/monitoring';
import { RECONCILER_ENTRY, WORKER_ENTRY } from '../../lib/payout-pipeline';
import { CDK_CONTEXT, logicalId, resources, synthesize, TEST_STAGE_CONFIG } from './support';

const { stack, template, templates, config } = synthesize();
/**
 * One synth for the settings each read in one place of the template (the public-route throttle, the
 * hot-wallet secret's break-glass role, the sweeper's batch, the audit's hour): a synth costs
 * seconds, and none of these touches what another's test reads.
 */
const BREAK_GLASS_ROLE = 'arn:aws:iam::123456789012:role/payments-break-glass';
let variedOnce: ReturnType<typeof synthesize> | undefined;
const varied = () => {
  variedOnce ??= synthesize({
    publicRouteRateLimit: '3',
    publicRouteBurstLimit: '6',
    hotWalletBreakGlassRoleArn: BREAK_GLASS_ROLE,
    sweepMaxPerRun: '50',
    ledgerAuditHourUtc: '22',
  });
  return variedOnce;
};
const all = resources(template);
const ofType = (type: string) => Object.entries(all).filter(([, r]) => r.Type === type);
const props = (id: string) => all[id]?.Properties ?? {};
const fnId = (construct: { fn: { node: { defaultChild?: unknown } } }) => logicalId(stack, construct.fn);
const functionEnv = (id: string) =>
  ((props(id).Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<string, unknown>;

const api = stack.api;
const pipeline = stack.pipeline;
const sweeper = stack.sweeper.fn;
const allFunctions = [...api.functions.values(), pipeline.worker, pipeline.reconciler, sweeper, stack.ledgerAudit.fn, stack.signer.fn];

describe('HTTP API', () => {
  it('serves the six spec routes, balance, the admin API, the user API, health and a $default not-found route', () => {
    const keys = ofType('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties?.RouteKey);
    expect(keys).toEqual(
      expect.arrayContaining([
        'POST /api/v1/agents/register',
        'POST /api/v1/agents/charges',
        'GET /api/v1/agents/charges',
        'GET /api/v1/agents/charge/{id}',
        'POST /api/v1/agents/withdraw',
        'GET /api/v1/agents/withdraw',
        'GET /api/v1/agents/balance',
        'POST /api/v1/admin/users',
        'POST /api/v1/admin/users/{id}/credits',
        'GET /api/v1/admin/users/{id}',
        'PATCH /api/v1/admin/agents/{id}',
        'GET /api/v1/users/me',
        'GET /api/v1/users/me/charges',
        'GET /api/v1/users/me/policy',
        'PUT /api/v1/users/me/policy',
        'POST /api/v1/users/me/charges/{id}/approve',
        'POST /api/v1/users/me/charges/{id}/decline',
        'POST /api/v1/users/me/keys/rotate',
        'GET /health',
        '$default',
      ]),
    );
    expect(keys).toHaveLength(ROUTES.length);
  });

  it('sends every route of ROUTES to a function of its own, built from its handler file', () => {
    const seen = new Set<string>();
    for (const route of ROUTES) {
      const key = route.path === '$default' ? '$default' : `${route.method} ${route.path}`;
      const [, routeResource] = ofType('AWS::ApiGatewayV2::Route').find(([, r]) => r.Properties?.RouteKey === key) ?? [];
      expect(routeResource).toBeDefined();
      const target = routeResource?.Properties?.Target as { 'Fn::Join': [string, unknown[]] };
      const integrationId = (target['Fn::Join'][1][1] as { Ref: string }).Ref;
      expect(props(integrationId)).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });

      const fn = api.functions.get(route.name);
      expect(fn?.entry).toBe(handlerEntry(route));
      expect(existsSync(path.join(PROJECT_ROOT, handlerEntry(route)))).toBe(true);
      const id = fn ? fnId(fn) : '';
      expect(props(integrationId).IntegrationUri).toEqual({ 'Fn::GetAtt': [id, 'Arn'] });
      seen.add(id);
    }
    expect(seen.size).toBe(ROUTES.length);
  });

  it('lets API Gateway invoke each route function, and nothing else', () => {
    const apiPermissions = ofType('AWS::Lambda::Permission').filter(([, r]) => r.Properties?.Principal === 'apigateway.amazonaws.com');
    expect(apiPermissions).toHaveLength(ROUTES.length);
  });

  it('has an explicit $default stage with JSON access logs (no headers or query) and throttling from the stage configuration', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Stage', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: config.throttleRateLimit, ThrottlingBurstLimit: config.throttleBurstLimit },
      AccessLogSettings: { DestinationArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('AccessLogs'), 'Arn'] }, Format: Match.anyValue() },
    });
    const [, stage] = ofType('AWS::ApiGatewayV2::Stage')[0] ?? [];
    const format = JSON.parse(String((stage?.Properties?.AccessLogSettings as { Format: string }).Format)) as Record<string, string>;
    expect(format).toMatchObject({ requestId: '$context.requestId', status: '$context.status', routeKey: '$context.routeKey' });
    expect(Object.values(format).join(' ')).not.toMatch(/header|querystring|requestOverride|body/i);
  });
});

describe('HTTP API route throttling', () => {
  const [stageId, stage] = ofType('AWS::ApiGatewayV2::Stage')[0] ?? [];
  const settings = (stage?.Properties?.RouteSettings ?? {}) as Record<
    string,
    { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }
  >;
  const publicRoutes = ROUTES.filter((r) => r.public);

  it('throttles every public (unauthenticated) route on its own, below the stage, and nothing else', () => {
    expect(publicRoutes.map((r) => r.name).sort()).toEqual(
      [
        'approval-decide',
        'approval-page',
        'consent-decide',
        'consent-page',
        'console',
        'console-pages',
        'console-passkey-sign-in',
        'console-sign-in',
        'console-sign-up',
        'health',
        'home',
        'jwks',
        'mcp-get',
        'not-found',
        'openapi',
        'paypal-webhook',
        'register-agent',
        'x402-supported',
      ].sort(),
    );
    // Besides them, the x402 facilitator's verify and settle (docs/design.md §19): anyone may
    // register the agent key they take, and every settle spends the fee payer's SOL.
    const x402 = ROUTES.filter((r) => r.name === 'x402-verify' || r.name === 'x402-settle');
    expect(x402.length).toBe(2);
    expect(Object.keys(settings).sort()).toEqual([...publicRoutes, ...x402].map(routeKey).sort());
    for (const route of x402) {
      expect(settings[routeKey(route)]).toEqual({
        ThrottlingRateLimit: config.publicRouteRateLimit,
        ThrottlingBurstLimit: config.publicRouteBurstLimit,
      });
    }
    for (const route of publicRoutes) {
      const own = settings[routeKey(route)];
      expect([route.name, own?.ThrottlingRateLimit !== undefined && own.ThrottlingRateLimit < config.throttleRateLimit]).toEqual([
        route.name,
        true,
      ]);
      expect(own?.ThrottlingBurstLimit).toBeLessThan(config.throttleBurstLimit);
    }
    // Registration keeps its own, lower one; the others share the stage's public-route throttle.
    expect(settings['POST /api/v1/agents/register']).toEqual({
      ThrottlingRateLimit: config.registerRateLimit,
      ThrottlingBurstLimit: config.registerBurstLimit,
    });
    for (const key of ['GET /approve/{token}', 'POST /approve/{token}', 'POST /api/v1/paypal/webhooks', 'GET /health', '$default']) {
      expect(settings[key]).toEqual({
        ThrottlingRateLimit: config.publicRouteRateLimit,
        ThrottlingBurstLimit: config.publicRouteBurstLimit,
      });
    }
  });

  it('throttles the console’s pages apart from its sign-in and sign-up posts (docs/operating/stages.md "Throttles")', () => {
    // Pages: every signed-in payer's views and the assets; sign-in: what anyone may send without a session.
    expect(config.consolePageRateLimit).toBe(15);
    expect(config.consoleSignInRateLimit).toBe(5);
    for (const key of ['ANY /console', 'ANY /console/{proxy+}']) {
      expect([key, settings[key]]).toEqual([key, { ThrottlingRateLimit: 15, ThrottlingBurstLimit: 30 }]);
    }
    for (const key of ['POST /console/login', 'POST /console/login/{proxy+}', 'POST /console/signup/{proxy+}']) {
      expect([key, settings[key]]).toEqual([key, { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 }]);
    }
    // Production's, from cdk.json: more payers, under its 200/s stage.
    const production = synthesize({
      ...(CDK_CONTEXT.stages as Record<string, Record<string, unknown>>).production,
      stage: 'production',
      alarmEmail: 'ops@example.com',
    });
    const [, prodStage] = Object.entries(resources(production.template)).find(([, r]) => r.Type === 'AWS::ApiGatewayV2::Stage') ?? [];
    const prod = prodStage?.Properties?.RouteSettings as Record<string, unknown>;
    expect(prod['ANY /console/{proxy+}']).toEqual({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 });
    expect(prod['POST /console/login/{proxy+}']).toEqual({ ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 });
  });

  it('creates each throttled route before the stage that names it (API Gateway refuses settings for a missing route)', () => {
    for (const route of publicRoutes) {
      const [routeId] = ofType('AWS::ApiGatewayV2::Route').find(([, r]) => r.Properties?.RouteKey === routeKey(route)) ?? [];
      expect(all[stageId ?? '']?.DependsOn).toEqual(expect.arrayContaining([routeId]));
    }
  });

  it('marks public every route whose handler reads no key (so a new consent or x402 route cannot go out unthrottled)', () => {
    const readsAKey = /authenticate\w*\(|x-agent-key|x-user-key|x-admin-key/;
    for (const route of ROUTES) {
      const source = readFileSync(path.join(PROJECT_ROOT, handlerEntry(route)), 'utf8');
      // A derived handler (`lambdaHandler(op)`) reads the keys its operation's credentials name.
      const derived = OPERATIONS.get(/lambdaHandler\((\w+)\)/.exec(source)?.[1] ?? '');
      const reads = derived ? (derived.credentials as Credentials).kind !== 'public' : readsAKey.test(source);
      if (!reads) expect([route.name, route.public]).toEqual([route.name, true]);
    }
  });

  it('takes the public-route throttle from the stage configuration', () => {
    const other = varied();
    const [, otherStage] = Object.entries(resources(other.template)).find(([, r]) => r.Type === 'AWS::ApiGatewayV2::Stage') ?? [];
    expect((otherStage?.Properties?.RouteSettings as Record<string, unknown>)['GET /health']).toEqual({
      ThrottlingRateLimit: 3,
      ThrottlingBurstLimit: 6,
    });
  });
});

describe('reserved concurrency', () => {
  const reserved = (fn: { fn: { node: { defaultChild?: unknown } } }) => props(fnId(fn)).ReservedConcurrentExecutions;

  it("reserves the payout worker at least its queue mapping's concurrency, the delivery worker its own, and one run for each scheduled function", () => {
    expect(reserved(pipeline.worker)).toBe(config.workerMaxConcurrency);
    expect(reserved(stack.webhooks.delivery)).toBe(config.webhookDeliveryConcurrency);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: fnId(stack.webhooks.delivery) },
      ScalingConfig: { MaximumConcurrency: config.webhookDeliveryConcurrency },
    });
    for (const fn of [pipeline.reconciler, sweeper, stack.topupWatcher.fn]) expect(reserved(fn)).toBe(1);
    // One invocation per stream shard, however many the table has: not capped unless the stage says so.
    expect(reserved(stack.webhooks.dispatcher)).toBeUndefined();
    // The API's functions share the unreserved pool.
    for (const fn of api.functions.values()) expect(reserved(fn)).toBeUndefined();
  });

  it('follows the stage configuration, and reserves nothing with reserveConcurrency=false (a small account)', () => {
    const other = synthesize({
      workerMaxConcurrency: '4',
      payoutWorkerReservedConcurrency: '6',
      webhookDeliveryConcurrency: '8',
      webhookDispatcherReservedConcurrency: '3',
      sweeperReservedConcurrency: '2',
    });
    const otherProps = (fn: { fn: { node: { defaultChild?: unknown } } }) =>
      resources(other.template)[logicalId(other.stack, fn.fn)]?.Properties?.ReservedConcurrentExecutions;
    expect(otherProps(other.stack.pipeline.worker)).toBe(6);
    expect(otherProps(other.stack.webhooks.delivery)).toBe(8);
    expect(otherProps(other.stack.webhooks.dispatcher)).toBe(3);
    expect(otherProps(other.stack.sweeper.fn)).toBe(2);
    expect(() => synthesize({ workerMaxConcurrency: '4', payoutWorkerReservedConcurrency: '3' })).toThrow(
      /payoutWorkerReservedConcurrency: at least workerMaxConcurrency/,
    );

    const none = synthesize({ reserveConcurrency: 'false' });
    const lambdas = Object.values(resources(none.template)).filter((r) => r.Type === 'AWS::Lambda::Function');
    expect(lambdas.filter((r) => r.Properties?.ReservedConcurrentExecutions !== undefined)).toEqual([]);
  });
});

describe('functions (the house construct)', () => {
  it('run Node.js 24 on ARM64 with JSON logs and a log group retained unless its first create fails; no half tracing, no source-map loading', () => {
    const lambdas = ofType('AWS::Lambda::Function');
    // Routes, payout worker, reconciler, sweeper, top-up watcher, webhook dispatcher and delivery worker, kill-switch fan-out, ledger audit, signer.
    expect(lambdas).toHaveLength(ROUTES.length + 9);
    for (const [id, fn] of lambdas) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        LoggingConfig: { LogFormat: 'JSON', ApplicationLogLevel: config.logLevel, LogGroup: { Ref: expect.any(String) } },
      });
      expect(functionEnv(id)).toMatchObject({ STAGE: 'test', LOG_LEVEL: config.logLevel });
      // Active tracing only with the SDK clients instrumented (Powertools Tracer, not a dependency).
      expect([id, fn.Properties?.TracingConfig ?? { Mode: 'PassThrough' }]).toEqual([id, { Mode: 'PassThrough' }]);
      // --enable-source-maps costs 6-15 % module-load CPU; maps are kept for offline symbolication.
      expect(functionEnv(id).NODE_OPTIONS).toBeUndefined();
      const logGroupId = (fn.Properties?.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
      expect(all[logGroupId]).toMatchObject({
        Type: 'AWS::Logs::LogGroup',
        DeletionPolicy: 'RetainExceptOnCreate',
        UpdateReplacePolicy: 'Retain',
        Properties: { RetentionInDays: config.logRetentionDays },
      });
    }
  });

  it('size memory and timeout by role: API handlers small and short, the worker larger and longer', () => {
    for (const fn of api.functions.values()) expect(props(fnId(fn))).toMatchObject({ MemorySize: 512, Timeout: 10 });
    expect(props(fnId(pipeline.worker))).toMatchObject({ MemorySize: 1024, Timeout: 60 });
    expect(props(fnId(sweeper))).toMatchObject({ MemorySize: 512, Timeout: 50 });
  });

  it('start with exactly their template environment: every handler module loads (its init checks what it needs)', () => {
    const saved = { ...process.env };
    const outcomes: [string, string][] = [];
    try {
      // One module registry for all of them (a fresh one each cost ~1 s a function): every entry
      // file is its own module, so each one's init runs, and reads its own environment through
      // the configuration reset before it (functions/config.ts: nothing reads the environment at
      // import but config()).
      jest.isolateModules(() => {
        const { resetForTests: resetLoaded } = require('../../functions/config') as typeof import('../../functions/config');
        for (const fn of allFunctions) {
          const env = functionEnv(fnId(fn));
          const resolved = Object.fromEntries(
            Object.entries(env).map(([k, v]) => [k, typeof v === 'string' ? v : `resolved-at-deploy-${k}`]),
          );
          // A Lambda environment: nothing inherited from Jest (no plain ADMIN_KEY or APPROVAL_SECRET).
          process.env = { AWS_REGION: 'eu-west-1', LOG_LEVEL: 'SILENT', ...resolved };
          resetLoaded();
          try {
            require(path.join(PROJECT_ROOT, fn.entry));
            outcomes.push([fn.entry, 'loads']);
          } catch (error) {
            outcomes.push([fn.entry, String(error)]);
          }
        }
      });
      // A second function of the same entry would find it loaded with the first one's environment.
      expect(new Set(outcomes.map(([entry]) => entry)).size).toBe(allFunctions.length);
      for (const [entry, outcome] of outcomes) expect([entry, outcome]).toEqual([entry, 'loads']);
    } finally {
      process.env = saved;
      resetForTests();
    }
  });

  it('give each function exactly the environment functions/config.ts reads, and it parses there', () => {
    const saved = { ...process.env };
    try {
      for (const fn of allFunctions) {
        const env = functionEnv(fnId(fn));
        // Deploy-time references (table name, queue URL, secret ARNs) become placeholders.
        const resolved = Object.fromEntries(
          Object.entries(env).map(([k, v]) => [k, typeof v === 'string' ? v : `resolved-at-deploy-${k}`]),
        );
        process.env = { AWS_REGION: 'eu-west-1', ...resolved };
        resetForTests();
        const parsed = readConfig();
        for (const key of Object.keys(resolved).filter((k) => k !== 'NODE_OPTIONS')) {
          expect([fn.entry, key, Object.hasOwn(parsed, key)]).toEqual([fn.entry, key, true]);
        }
      }
    } finally {
      process.env = saved;
      resetForTests();
    }
  });

  it("give the x402 routes the treasury (the hot wallet unless the stage names one), the fee payer's address and mainnet's network id with mainnet's mint", () => {
    const hotWalletAddress = 'HotWa11etAddress1111111111111111111111111111';
    const treasury = 'Treasury111111111111111111111111111111111111';
    const envOf = (synthesized: ReturnType<typeof synthesize>, name: string) => {
      const fn = synthesized.stack.api.functions.get(name);
      const props = resources(synthesized.template)[fn ? logicalId(synthesized.stack, fn.fn) : '']?.Properties ?? {};
      return ((props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<string, unknown>;
    };
    const withWallet = synthesize({ hotWalletAddress });
    for (const name of ['x402-verify', 'x402-settle', 'x402-supported', 'agent-x402-settings']) {
      expect([name, envOf(withWallet, name)]).toEqual([
        name,
        expect.objectContaining({ SOLANA_HOT_WALLET_ADDRESS: hotWalletAddress, X402_PAY_TO: hotWalletAddress }),
      ]);
    }
    const mainnet = synthesize({
      hotWalletAddress,
      x402PayTo: treasury,
      usdcMint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    });
    expect(envOf(mainnet, 'x402-settle')).toMatchObject({
      X402_PAY_TO: treasury,
      X402_NETWORK: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
      SOLANA_HOT_WALLET_ADDRESS: hotWalletAddress,
    });
  });

  it('hand the admin key and the approval secret only as Secrets Manager ARNs, and only to routes that use them', () => {
    for (const route of ROUTES) {
      const fn = api.functions.get(route.name);
      const env = functionEnv(fn ? fnId(fn) : '');
      expect(env.ADMIN_KEY).toBeUndefined();
      // The test stage authorizes admin routes with IAM (the default): no function gets the admin key.
      if (readsAdminKey(route, config.adminAuth)) expect(env.ADMIN_KEY_SECRET_ARN).toEqual({ Ref: logicalId(stack, stack.data.adminKey) });
      else expect(env.ADMIN_KEY_SECRET_ARN).toBeUndefined();
      expect(env.APPROVAL_SECRET).toBeUndefined();
      if (route.approvalSecret) expect(env.APPROVAL_SECRET_ARN).toEqual({ Ref: logicalId(stack, stack.data.approvalSecret) });
      else expect(env.APPROVAL_SECRET_ARN).toBeUndefined();
      // The stage's public address, for the links (never the request's Host).
      expect(env.PUBLIC_BASE_URL).toEqual(route.publicLinks ? TEST_STAGE_CONFIG.publicBaseUrl : undefined);
      if (route.queue) expect(env.PAYOUT_QUEUE_URL).toEqual({ Ref: logicalId(stack, pipeline.queue) });
      else expect(env.PAYOUT_QUEUE_URL).toBeUndefined();
      // The withdraw route knows the mint (a destination it refuses, and whose token accounts it
      // looks up) and the RPC URL only as an ARN, never the hot wallet. Top-up routes know PayPal's
      // Orders API (its credentials only as an ARN), never the hot wallet.
      const railKeys = Object.keys(env).filter((k) => /SOLANA|PAYPAL|USDC/.test(k));
      const topupKeys =
        route.topups === 'webhook'
          ? ['PAYPAL_BASE_URL', 'PAYPAL_CREDENTIALS_SECRET_ARN', 'PAYPAL_WEBHOOK_ID_SECRET_ARN']
          : ['USDC_MINT', 'PAYPAL_BASE_URL', 'PAYPAL_CREDENTIALS_SECRET_ARN'];
      // x402 routes know the mint and the RPC URL's ARN, never the hot wallet's: the ones whose payments
      // the hot wallet signs name the signer function instead (lib/signer.ts, DESIGN §24).
      const x402Keys = ['USDC_MINT', 'SOLANA_RPC_URL_SECRET_ARN'];
      expect(railKeys.sort()).toEqual(
        (route.queue === true
          ? ['USDC_MINT', 'SOLANA_RPC_URL_SECRET_ARN']
          : // An x402 refund only queues: the mint, never the RPC URL.
            route.queue === 'refunds'
            ? ['USDC_MINT']
            : route.topups
              ? topupKeys
              : route.x402
                ? x402Keys
                : []
        ).sort(),
      );
      if (route.queue === true || route.x402)
        expect(env.SOLANA_RPC_URL_SECRET_ARN).toEqual({ Ref: logicalId(stack, stack.data.solanaRpcUrl) });
      expect(env.SIGNER_FUNCTION_NAME).toEqual(route.x402 === 'settle' ? { Ref: logicalId(stack, stack.signer.fn.fn) } : undefined);
      // The test stage names no hot wallet address: the x402 routes answer 503 until the operator sets it.
      expect(env.X402_NETWORK).toEqual(route.x402 ? 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1' : undefined);
      expect(env.X402_PAY_TO).toBeUndefined();
    }
    expect(ROUTES.find((r) => r.name === 'create-charge')?.approvalSecret).toBe(true);
  });

  it('give PUBLIC_BASE_URL to the routes that make approval links and to nothing else', () => {
    const url = 'https://pay.example.com/v1';
    const there = synthesize({ publicBaseUrl: `${url}/` });
    const envThere = (fn: { fn: { node: { defaultChild?: unknown } } }) =>
      ((resources(there.template)[logicalId(there.stack, fn.fn)]?.Properties?.Environment as { Variables?: Record<string, unknown> })
        ?.Variables ?? {}) as Record<string, unknown>;
    for (const route of ROUTES) {
      const fn = there.stack.api.functions.get(route.name);
      expect([route.name, fn ? envThere(fn).PUBLIC_BASE_URL : 'no function']).toEqual([route.name, route.publicLinks ? url : undefined]);
    }
    for (const fn of [there.stack.pipeline.worker, there.stack.pipeline.reconciler, there.stack.sweeper.fn]) {
      expect(envThere(fn).PUBLIC_BASE_URL).toBeUndefined();
    }
    expect(() => synthesize({ publicBaseUrl: 'http://pay.example.com' })).toThrow(/publicBaseUrl: an https:\/\/ URL/);
  });
});

describe('data', () => {
  it('is one on-demand table with the keys, GSI1, GSI2 and TTL attribute of functions/store/table.ts', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: GSI1.indexName,
          KeySchema: [
            { AttributeName: GSI1.partitionKey, KeyType: 'HASH' },
            { AttributeName: GSI1.sortKey, KeyType: 'RANGE' },
          ],
          // As bin/local/table.ts creates it.
          Projection: { ProjectionType: 'ALL' },
        },
        {
          // A user's charges across agents (the user history).
          IndexName: GSI2.indexName,
          KeySchema: [
            { AttributeName: GSI2.partitionKey, KeyType: 'HASH' },
            { AttributeName: GSI2.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
      TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
    });
    expect([GSI2.indexName, GSI2.partitionKey, GSI2.sortKey]).toEqual(['GSI2', 'GSI2PK', 'GSI2SK']);
    const attributes = props(logicalId(stack, stack.data.table)).AttributeDefinitions as { AttributeName: string; AttributeType: string }[];
    expect(attributes).toEqual(
      expect.arrayContaining([GSI2.partitionKey, GSI2.sortKey].map((n) => ({ AttributeName: n, AttributeType: 'S' }))),
    );
  });

  it('has point-in-time recovery and deletion protection, and is retained if the stack goes, is replaced or its first create fails', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: { PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, DeletionProtectionEnabled: true },
    });
  });

  it('lets a failed first deploy roll back: nothing a rollback would delete refuses deletion', () => {
    // A create rollback deletes what it created unless its DeletionPolicy is Retain; DynamoDB
    // refuses DeleteTable while deletion protection is on, and the rollback would end in
    // ROLLBACK_FAILED. Only what has no deletion protection may be deleted by it (RetainExceptOnCreate).
    const protectedResources = Object.entries(all).filter(([, r]) => r.Properties?.DeletionProtectionEnabled === true);
    expect(protectedResources.map(([id]) => id)).toEqual([logicalId(stack, stack.data.table)]);
    for (const [id, resource] of protectedResources) expect([id, resource.DeletionPolicy]).toEqual([id, 'Retain']);
  });

  it('keeps six named secrets whose values never appear in the template; the admin key and the approval secret are generated plain strings', () => {
    const secrets = ofType('AWS::SecretsManager::Secret');
    expect(secrets.map(([, r]) => r.Properties?.Name).sort()).toEqual(
      ['admin-key', 'approval-secret', 'paypal-credentials', 'paypal-webhook-id', 'solana-hot-wallet', 'solana-rpc-url'].map(
        (n) => `agent-payment-service/test/${n}`,
      ),
    );
    for (const [, secret] of secrets) expect(secret.Properties?.SecretString).toBeUndefined();
    const admin = props(logicalId(stack, stack.data.adminKey));
    expect(admin).toMatchObject({ Name: 'agent-payment-service/test/admin-key', GenerateSecretString: { PasswordLength: 48 } });
    // No JSON template: admin-key.ts reads the value as-is.
    expect((admin.GenerateSecretString as Record<string, unknown>).SecretStringTemplate).toBeUndefined();
    // Pinned generator: CloudFormation generates a new value when it changes, which would void every
    // outstanding approval link. Long enough for config.ts (APPROVAL_SECRET_ARN's value: ≥ 32 characters).
    const approval = props(logicalId(stack, stack.data.approvalSecret));
    expect(approval).toMatchObject({ Name: 'agent-payment-service/test/approval-secret' });
    expect(approval.GenerateSecretString).toEqual({ PasswordLength: 64, ExcludePunctuation: true, IncludeSpace: false });
    expect(approval.KmsKeyId).toBeUndefined();
  });

  it('retains the secrets and the hot-wallet key on update or stack deletion, but not after a failed first create (so a retry can reuse the names)', () => {
    const stateful = [...ofType('AWS::SecretsManager::Secret'), ...ofType('AWS::KMS::Key'), ...ofType('AWS::Logs::LogGroup')];
    expect(stateful.length).toBeGreaterThan(4);
    for (const [id, resource] of stateful) {
      expect([id, resource.DeletionPolicy, resource.UpdateReplacePolicy]).toEqual([id, 'RetainExceptOnCreate', 'Retain']);
    }
  });

  it('creates the rail secrets empty, so no later template change can generate a value over the one an operator put', () => {
    for (const secret of [stack.data.solanaHotWallet, stack.data.solanaRpcUrl, stack.data.paypalCredentials]) {
      const p = props(logicalId(stack, secret));
      expect([p.Name, p.GenerateSecretString, p.SecretString]).toEqual([p.Name, undefined, undefined]);
    }
  });

  it('encrypts the hot-wallet secret with its own customer-managed key, rotated by KMS', () => {
    const keyId = logicalId(stack, stack.data.hotWalletKey);
    expect(props(logicalId(stack, stack.data.solanaHotWallet)).KmsKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
    expect(props(keyId)).toMatchObject({ EnableKeyRotation: true, PendingWindowInDays: 30 });
    template.hasResourceProperties('AWS::KMS::Alias', {
      AliasName: 'alias/agent-payment-service/test/solana-hot-wallet',
      TargetKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] },
    });
    // The other secrets stay on the AWS-managed key.
    for (const secret of [stack.data.adminKey, stack.data.approvalSecret, stack.data.solanaRpcUrl, stack.data.paypalCredentials]) {
      expect(props(logicalId(stack, secret)).KmsKeyId).toBeUndefined();
    }
  });

  it('lets nobody but the hot-wallet signer and the configured break-glass role read the hot-wallet secret (DESIGN §24: the money paths invoke the signer, test/cdk/iam.test.ts)', () => {
    const roles = [{ 'Fn::GetAtt': [logicalId(stack, stack.signer.fn.role), 'Arn'] }];
    const denyOthers = (allowed: unknown[]) => ({
      SecretId: { Ref: logicalId(stack, stack.data.solanaHotWallet) },
      ResourcePolicy: {
        Statement: [
          {
            Sid: 'OnlyPayoutFunctionsAndBreakGlassRead',
            Effect: 'Deny',
            Principal: { AWS: '*' },
            Action: 'secretsmanager:GetSecretValue',
            Resource: '*',
            Condition: { ArnNotEquals: { 'aws:PrincipalArn': allowed } },
          },
        ],
      },
    });
    template.resourceCountIs('AWS::SecretsManager::ResourcePolicy', 1);
    template.hasResourceProperties('AWS::SecretsManager::ResourcePolicy', denyOthers(roles));

    const breakGlass = BREAK_GLASS_ROLE;
    const withBreakGlass = varied();
    const rolesThere = [{ 'Fn::GetAtt': [logicalId(withBreakGlass.stack, withBreakGlass.stack.signer.fn.role), 'Arn'] }];
    withBreakGlass.template.hasResourceProperties('AWS::SecretsManager::ResourcePolicy', {
      ResourcePolicy: {
        Statement: [Match.objectLike({ Condition: { ArnNotEquals: { 'aws:PrincipalArn': [...rolesThere, breakGlass] } } })],
      },
    });
  });
});

describe('payout pipeline', () => {
  const queue = props(logicalId(stack, pipeline.queue));
  const dlqId = logicalId(stack, pipeline.deadLetterQueue);
  const worker = props(fnId(pipeline.worker));

  it('moves a payout message to the DLQ after PAYOUT_MAX_RECEIVES receives (config.ts default), and tells the functions', () => {
    const saved = { ...process.env };
    try {
      delete process.env.PAYOUT_MAX_RECEIVES;
      resetForTests();
      expect(config.payoutMaxReceives).toBe(readConfig().PAYOUT_MAX_RECEIVES);
    } finally {
      process.env = saved;
      resetForTests();
    }
    expect(queue.RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] },
      maxReceiveCount: config.payoutMaxReceives,
    });
    expect(functionEnv(fnId(pipeline.worker)).PAYOUT_MAX_RECEIVES).toBe(String(config.payoutMaxReceives));
    expect(functionEnv(fnId(pipeline.reconciler)).PAYOUT_MAX_RECEIVES).toBe(String(config.payoutMaxReceives));
  });

  it('keeps dead letters longer than the queue keeps messages', () => {
    expect(props(dlqId).MessageRetentionPeriod as number).toBeGreaterThan(queue.MessageRetentionPeriod as number);
  });

  it('hides a received message longer than the worker can run, and leases payouts between the two', () => {
    const visibility = queue.VisibilityTimeout as number;
    const workerTimeout = worker.Timeout as number;
    const reconcilerTimeout = props(fnId(pipeline.reconciler)).Timeout as number;
    expect(visibility).toBeGreaterThanOrEqual(6 * workerTimeout);
    const lease = Number(functionEnv(fnId(pipeline.worker)).PAYOUT_LEASE_SECONDS);
    expect(lease).toBeGreaterThan(Math.max(workerTimeout, reconcilerTimeout));
    expect(lease).toBeLessThanOrEqual(visibility);
    expect(functionEnv(fnId(pipeline.reconciler)).PAYOUT_LEASE_SECONDS).toBe(String(lease));
  });

  it('encrypts both queues and refuses requests without TLS', () => {
    for (const id of [logicalId(stack, pipeline.queue), dlqId]) {
      expect(props(id).SqsManagedSseEnabled).toBe(true);
      const policy = ofType('AWS::SQS::QueuePolicy').find(([, p]) => JSON.stringify(p.Properties?.Queues).includes(id));
      expect(policy?.[1].Properties?.PolicyDocument).toMatchObject({
        Statement: [expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })],
      });
    }
  });

  it('feeds the worker from the queue with partial batch failures, a bounded batch and bounded concurrency', () => {
    // The payout worker's; the webhook pipeline has two more (test/webhooks/webhook-stack.test.ts), the
    // kill-switch fan-out one (test/cdk/kill-switch-stack.test.ts).
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 4);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: fnId(pipeline.worker) },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack, pipeline.queue), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: config.workerBatchSize,
      ScalingConfig: { MaximumConcurrency: config.workerMaxConcurrency },
    });
    expect(pipeline.worker.entry).toBe(WORKER_ENTRY);
  });

  it('runs the reconciler on a schedule, once per tick: no retries, and it ends before the next tick', () => {
    expect(pipeline.reconciler.entry).toBe(RECONCILER_ENTRY);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: `rate(${config.reconcileEveryMinutes} minutes)`,
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [fnId(pipeline.reconciler), 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0 } })],
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: fnId(pipeline.reconciler) },
      MaximumRetryAttempts: 0,
    });
    expect(props(fnId(pipeline.reconciler)).Timeout as number).toBeLessThan(config.reconcileEveryMinutes * 60);
  });

  it('configures the rails for the worker and the reconciler from the stage: USDC mint, PayPal sandbox, and the RPC URL as a secret only', () => {
    for (const fn of [pipeline.worker, pipeline.reconciler]) {
      expect(functionEnv(fnId(fn)).SOLANA_RPC_URL).toBeUndefined();
      expect(functionEnv(fnId(fn)).SOLANA_HOT_WALLET_SECRET_ARN).toBeUndefined();
      expect(functionEnv(fnId(fn))).toMatchObject({
        SOLANA_RPC_URL_SECRET_ARN: { Ref: logicalId(stack, stack.data.solanaRpcUrl) },
        USDC_MINT: config.usdcMint,
        PAYPAL_BASE_URL: 'https://api-m.sandbox.paypal.com',
        // A payout's transaction is signed by the hot-wallet signer; the key is not theirs to read.
        SIGNER_FUNCTION_NAME: { Ref: logicalId(stack, stack.signer.fn.fn) },
        PAYPAL_CREDENTIALS_SECRET_ARN: { Ref: logicalId(stack, stack.data.paypalCredentials) },
      });
    }
  });
});

describe('charge sweeper', () => {
  it('runs from functions/sweeper/handler.ts every minute (expiry lags ≤ 60 s), once per tick, and ends before the next tick', () => {
    expect(sweeper.entry).toBe(SWEEPER_ENTRY);
    expect(existsSync(path.join(PROJECT_ROOT, SWEEPER_ENTRY))).toBe(true);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [fnId(sweeper), 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 },
        }),
      ],
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { FunctionName: { Ref: fnId(sweeper) }, MaximumRetryAttempts: 0 });
    expect(props(fnId(sweeper)).Timeout as number).toBeLessThan(60);
    // EventBridge may invoke it, nothing else.
    const permissions = ofType('AWS::Lambda::Permission').filter(
      ([, r]) => JSON.stringify(r.Properties?.FunctionName) === JSON.stringify({ 'Fn::GetAtt': [fnId(sweeper), 'Arn'] }),
    );
    expect(permissions.map(([, r]) => r.Properties?.Principal)).toEqual(['events.amazonaws.com']);
  });

  it('expires at most sweepMaxPerRun charges per run (SWEEP_MAX_PER_RUN, config.ts default), and knows the table, nothing else', () => {
    const saved = { ...process.env };
    try {
      delete process.env.SWEEP_MAX_PER_RUN;
      resetForTests();
      expect(config.sweepMaxPerRun).toBe(readConfig().SWEEP_MAX_PER_RUN);
    } finally {
      process.env = saved;
      resetForTests();
    }
    expect(functionEnv(fnId(sweeper))).toEqual({
      STAGE: 'test',
      LOG_LEVEL: config.logLevel,
      TABLE_NAME: { Ref: logicalId(stack, stack.data.table) },
      SWEEP_MAX_PER_RUN: String(config.sweepMaxPerRun),
    });
    const other = varied();
    const env = resources(other.template)[logicalId(other.stack, other.stack.sweeper.fn.fn)]?.Properties?.Environment as {
      Variables: Record<string, unknown>;
    };
    expect(env.Variables.SWEEP_MAX_PER_RUN).toBe('50');
  });
});

describe('daily ledger audit', () => {
  const fn = stack.ledgerAudit.fn;

  it('runs functions/ledger-audit/handler.ts once a day at ledgerAuditHourUtc, one run at a time, for up to 15 minutes', () => {
    expect(fn.entry).toBe(LEDGER_AUDIT_ENTRY);
    expect(existsSync(path.join(PROJECT_ROOT, LEDGER_AUDIT_ENTRY))).toBe(true);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: `cron(17 ${config.ledgerAuditHourUtc} * * ? *)`,
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [fnId(fn), 'Arn'] } })],
    });
    expect(props(fnId(fn))).toMatchObject({ Timeout: 900, ReservedConcurrentExecutions: 1 });
    expect(functionEnv(fnId(fn))).toEqual({
      STAGE: 'test',
      LOG_LEVEL: config.logLevel,
      TABLE_NAME: { Ref: logicalId(stack, stack.data.table) },
    });
    const other = varied();
    other.template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'cron(17 22 * * ? *)' });
  });
});

describe('dashboard', () => {
  const [, dashboard] = ofType('AWS::CloudWatch::Dashboard')[0] ?? [];
  const body = JSON.stringify(dashboard?.Properties?.DashboardBody ?? '');

  it('is one dashboard per stage with the golden signals and every alarm', () => {
    expect(ofType('AWS::CloudWatch::Dashboard')).toHaveLength(1);
    expect(dashboard?.Properties?.DashboardName).toBe('agent-payment-service-test');
    for (const title of [
      'Latency (ms)',
      'Traffic (requests/min)',
      'API errors',
      '5xx by money route',
      'Function errors',
      'Saturation: throttles',
      'Saturation: queue depths',
      'Saturation: waiting (s)',
      'Alarms',
    ]) {
      expect([title, body.includes(title)]).toEqual([title, true]);
    }
    for (const stat of ['p50', 'p99']) expect(body).toContain(stat);
    for (const metric of [
      'ThrottledRequests',
      'TransactionConflict',
      'ApproximateNumberOfMessagesVisible',
      'IteratorAge',
      'SweeperLagSeconds',
      'Api429-test',
    ]) {
      expect([metric, body.includes(metric)]).toEqual([metric, true]);
    }
    // The alarm widget lists every alarm of the stack.
    for (const [id] of ofType('AWS::CloudWatch::Alarm')) expect([id, body.includes(id)]).toEqual([id, true]);
  });

  it('has one alarm widget, at the bottom, listing each alarm of the stack once (the pipelines’ alarms too)', () => {
    // The body is JSON with deploy-time references spliced into its strings: name each by its logical id.
    const parts = (dashboard?.Properties?.DashboardBody as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    const text = parts
      .map((part) => {
        if (typeof part === 'string') return part;
        const ref = part as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
        return ref.Ref ?? ref['Fn::GetAtt']?.[0] ?? 'token';
      })
      .join('');
    const widgets = (JSON.parse(text) as { widgets: { type: string; properties: { alarms?: string[] } }[] }).widgets;
    const alarmWidgets = widgets.filter((w) => w.type === 'alarm');
    expect(alarmWidgets).toHaveLength(1);
    expect(widgets.at(-1)?.type).toBe('alarm');
    const listed = alarmWidgets[0]?.properties.alarms ?? [];
    expect([...listed].sort()).toEqual(
      ofType('AWS::CloudWatch::Alarm')
        .map(([id]) => id)
        .sort(),
    );
    // The webhook pipeline's and the kill switch's alarms are added after the dashboard is built.
    const later = [stack.webhooks, stack.killSwitch].flatMap((c) => c.node.findAll().filter((n) => n instanceof cloudwatch.Alarm));
    expect(later.length).toBeGreaterThan(0);
    for (const alarm of later) expect(listed).toContain(stack.getLogicalId(alarm.node.defaultChild as never));
  });
});

describe('size', () => {
  /**
   * What one route adds to its part's nested stack (function, role, policy, log group, integration,
   * invoke permission) and to the parent (the route: docs/operating/stack.md "Nested stacks" says why it stays).
   */
  const PER_ROUTE_IN_PART = 6;
  const PER_ROUTE_IN_PARENT = 1;
  /** The parent's budget (DESIGN §24): under 300 of CloudFormation's 500, with room for PARENT_ROOM_ROUTES more routes. */
  const PARENT_BUDGET = 300;
  const PARENT_ROOM_ROUTES = 40;
  /** A nested stack's: below 450 of 500, with room for PART_ROOM_ROUTES more routes in it. */
  const PART_BUDGET = 450;
  const PART_ROOM_ROUTES = 12;
  const count = (t: (typeof templates)[number]) => Object.keys(t.template.toJSON().Resources as object).length;

  it('puts each route function, its integration and its invoke permission in the nested stack of its part of the API, the routes themselves in the parent', () => {
    expect([...api.parts.keys()].sort()).toEqual([...API_PARTS].sort());
    for (const route of ROUTES) {
      const fn = api.functions.get(route.name);
      expect([route.name, fn && Stack.of(fn)]).toEqual([route.name, api.parts.get(apiPart(route))]);
    }
    // The table, secrets, queues, pipelines, the API and monitoring stay in the parent.
    const parent = templates[0]?.template;
    for (const type of ['AWS::DynamoDB::Table', 'AWS::SQS::Queue', 'AWS::SecretsManager::Secret', 'AWS::KMS::Key', 'AWS::SNS::Topic']) {
      expect([type, Object.keys(parent?.findResources(type) ?? {}).length]).toEqual([type, ofType(type).length]);
    }
    parent?.resourceCountIs('AWS::ApiGatewayV2::Route', ROUTES.length);
    parent?.resourceCountIs('AWS::ApiGatewayV2::Integration', 0);
    for (const route of ROUTES) {
      const part = templates.find((t) => t.stack === api.parts.get(apiPart(route)))?.template.toJSON().Resources as Record<
        string,
        { Type: string; Properties: Record<string, unknown> }
      >;
      const fnId = api.functions.get(route.name)?.fn.node.defaultChild as never;
      const ref = JSON.stringify({ 'Fn::GetAtt': [Stack.of(fnId).getLogicalId(fnId), 'Arn'] });
      const of = (type: string) => Object.values(part).filter((r) => r.Type === type && JSON.stringify(r.Properties).includes(ref));
      expect([route.name, of('AWS::ApiGatewayV2::Integration').length, of('AWS::Lambda::Permission').length]).toEqual([route.name, 1, 1]);
    }
    // In the parent, no invoke permission of a route function remains (the signer has none at all).
    expect(Object.keys(parent?.findResources('AWS::Lambda::Permission') ?? {}).every((id) => !/Integration/.test(id))).toBe(true);
    parent?.resourceCountIs('AWS::CloudWatch::Alarm', ofType('AWS::CloudWatch::Alarm').length);
  });

  it(`keeps the parent under ${PARENT_BUDGET} resources with room for ${PARENT_ROOM_ROUTES} more routes, and each nested stack below ${PART_BUDGET} of CloudFormation's 500 with room for ${PART_ROOM_ROUTES}`, () => {
    expect(templates.length).toBe(1 + API_PARTS.length);
    for (const [i, t] of templates.entries()) {
      const room =
        i === 0
          ? count(t) + PARENT_ROOM_ROUTES * PER_ROUTE_IN_PARENT < PARENT_BUDGET
          : count(t) + PART_ROOM_ROUTES * PER_ROUTE_IN_PART <= PART_BUDGET;
      expect([t.stack.node.path, count(t), room]).toEqual([t.stack.node.path, count(t), true]);
    }
  });

  it("keeps every template within CloudFormation's other quotas: 200 parameters, 200 outputs, 1 MB (S3) of template", () => {
    for (const t of templates) {
      const json = t.template.toJSON() as { Parameters?: object; Outputs?: object };
      const parameters = Object.keys(json.Parameters ?? {}).length;
      const outputs = Object.keys(json.Outputs ?? {}).length;
      const bytes = JSON.stringify(json).length;
      expect([t.stack.node.path, parameters <= 150, outputs <= 150, bytes < 800_000]).toEqual([t.stack.node.path, true, true, true]);
    }
  });

  it('costs a route what the room above assumes', () => {
    const parent = templates[0];
    const parts = templates.slice(1);
    // The same stack less one agent route (one that neither an alarm nor a throttle names).
    const lessOne = synthesize({}, { routes: ROUTES.filter((r) => r.name !== 'get-balance') });
    const agent = parts.find((t) => t.stack === api.parts.get('agent'));
    const agentLessOne = lessOne.templates.find((t) => t.stack === lessOne.stack.api.parts.get('agent'));
    if (!parent || !agent || !agentLessOne) throw new Error('no parent or agent stack');
    expect(count(agent) - count(agentLessOne)).toBe(PER_ROUTE_IN_PART);
    expect(count(parent) - count(lessOne.templates[0] as typeof parent)).toBe(PER_ROUTE_IN_PARENT);
  });
});

describe('alarms', () => {
  const alarms = new Map(ofType('AWS::CloudWatch::Alarm').map(([, r]) => [String(r.Properties?.AlarmName), r.Properties ?? {}]));
  const alarm = (name: string) => alarms.get(`agent-payment-service-test-${name}`) ?? {};
  const topic = { Ref: logicalId(stack, stack.monitoring.topic) };

  it('notify the alarm topic on alarm and on recovery', () => {
    expect([...alarms.keys()].sort()).toEqual(
      [
        'Api5xxRate',
        'PayoutDlqNotEmpty',
        'PayoutQueueBacklog',
        'PayoutRailNeedsOperator',
        'PayoutWorkerErrors',
        'PayoutWorkerThrottles',
        'PayoutsStuckProcessing',
        'X402RefundsStuck',
        'ReconcilerErrors',
        'ReconcilerNotRunning',
        'X402FinalityMismatch',
        'X402CreditHeldAtLimit',
        'TransferCreditedElsewhere',
        'X402PurchasesUnsearched',
        'X402FeePayerSpend',
        'HotWalletSolLow',
        'SweeperErrors',
        'SweeperNotRunning',
        'ChargesNotExpiring',
        'TopupWatcherErrors',
        'TopupWatcherNotRunning',
        'TopupFailed',
        'TopupReversed',
        'UnmatchedTopupPayment',
        'WebhookDlqNotEmpty',
        'WebhookDispatcherErrors',
        'WebhookDispatcherIteratorAge',
        'WebhookStreamFailures',
        'WebhookQueueAge',
        'WebhookDeliveryErrors',
        'KillSwitchFanOutFailures',
        'KillSwitchFanOutErrors',
        'KillSwitchFanOutIteratorAge',
        'Api429Rate',
        'DynamoDbThrottles',
        'DynamoDbTransactionConflicts',
        'SweeperLag',
        'LedgerAuditFails',
        ...ROUTES.filter((r) => (MONEY_ROUTES as readonly string[]).includes(r.name)).map((r) => `Route5xx${routeConstructId(r)}`),
      ]
        .sort()
        .map((n) => `agent-payment-service-test-${n}`),
    );
    for (const props of alarms.values()) {
      expect(props.AlarmActions).toEqual([topic]);
      expect(props.OKActions).toEqual([topic]);
    }
  });

  it("can be delivered: the topic lets CloudWatch publish for this account's alarms of this stage, and refuses requests without TLS", () => {
    const policies = ofType('AWS::SNS::TopicPolicy').filter(([, p]) => JSON.stringify(p.Properties?.Topics) === JSON.stringify([topic]));
    expect(policies).toHaveLength(1);
    const statements = (policies[0]?.[1].Properties?.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
    expect(statements).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        {
          Sid: 'AllowThisStagesAlarms',
          Effect: 'Allow',
          Principal: { Service: 'cloudwatch.amazonaws.com' },
          Action: 'sns:Publish',
          Resource: topic,
          Condition: {
            StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
            ArnLike: {
              'aws:SourceArn': {
                'Fn::Join': [
                  '',
                  [
                    'arn:',
                    { Ref: 'AWS::Partition' },
                    ':cloudwatch:',
                    { Ref: 'AWS::Region' },
                    ':',
                    { Ref: 'AWS::AccountId' },
                    ':alarm:agent-payment-service-test-*',
                  ],
                ],
              },
            },
          },
        },
      ]),
    );
    expect(statements).toHaveLength(2);
    // Every alarm's name falls under that pattern.
    for (const name of alarms.keys()) expect(name.startsWith('agent-payment-service-test-')).toBe(true);
  });

  it('fire on any message in the dead-letter queue', () => {
    expect(alarm('PayoutDlqNotEmpty')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack, pipeline.deadLetterQueue), 'QueueName'] } }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('fire when the oldest payout message has waited 15 minutes', () => {
    expect(alarm('PayoutQueueBacklog')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack, pipeline.queue), 'QueueName'] } }],
      Statistic: 'Maximum',
      Threshold: 900,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('fire when Lambda throttles the worker', () => {
    expect(alarm('PayoutWorkerThrottles')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Throttles',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: fnId(pipeline.worker) } }],
      Statistic: 'Sum',
      Threshold: 1,
    });
  });

  it('fire on worker errors', () => {
    expect(alarm('PayoutWorkerErrors')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: fnId(pipeline.worker) } }],
      Threshold: 1,
    });
  });

  it('fire on the API 5xx rate, not the count, and only from a minimum number of requests (one 5xx of one request pages nobody)', () => {
    const props = alarm('Api5xxRate');
    expect(props).toMatchObject({ Threshold: config.api5xxRatePercent, ComparisonOperator: 'GreaterThanThreshold' });
    const metrics = props.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string } } }[];
    expect(config.api5xxMinRequests).toBe(20);
    expect(metrics.find((m) => m.Expression)?.Expression).toBe('IF(requests >= 20, 100 * errors / requests, 0)');
    expect(
      metrics
        .filter((m) => m.MetricStat)
        .map((m) => m.MetricStat?.Metric.MetricName)
        .sort(),
    ).toEqual(['5xx', 'Count']);
  });

  it('fire on payouts stuck in PROCESSING, on the exact metric functions/observability/metrics.ts emits', () => {
    const saved = { ...process.env };
    let emitted: Record<string, unknown>;
    try {
      process.env.STAGE = 'test';
      resetForTests();
      metrics().addMetric(STUCK_PAYOUTS_METRIC, 'Count', 2);
      emitted = metrics().serializeMetrics() as unknown as Record<string, unknown>;
      metrics().clearMetrics();
    } finally {
      process.env = saved;
      resetForTests();
    }
    const directive = (emitted._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] }).CloudWatchMetrics[0];
    const dimensions = (directive?.Dimensions[0] ?? []).map((name) => ({ Name: name, Value: emitted[name] }));
    expect(alarm('PayoutsStuckProcessing')).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: STUCK_PAYOUTS_METRIC,
      Statistic: 'Maximum',
      Threshold: 1,
      EvaluationPeriods: 3,
    });
    expect(directive?.Namespace).toBe(METRICS_NAMESPACE);
    expect(new Set((alarm('PayoutsStuckProcessing').Dimensions as unknown[]).map((d) => JSON.stringify(d)))).toEqual(
      new Set(dimensions.map((d) => JSON.stringify(d))),
    );
  });

  it('fire when the reconciler fails repeatedly or stops running', () => {
    expect(alarm('ReconcilerErrors')).toMatchObject({ MetricName: 'Errors', EvaluationPeriods: 3, DatapointsToAlarm: 2 });
    expect(alarm('ReconcilerNotRunning')).toMatchObject({
      MetricName: 'Invocations',
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      TreatMissingData: 'breaching',
    });
  });

  it('fire when the worker or reconciler logs a rail error only an operator can fix (funds, configuration, an ambiguous PayPal answer)', () => {
    const filters = ofType('AWS::Logs::MetricFilter')
      .map(([, r]) => r.Properties ?? {})
      .filter((f) => JSON.stringify(f.MetricTransformations).includes('RailNeedsOperator'));
    expect(filters.map((f) => f.LogGroupName).sort()).toEqual(
      [pipeline.worker, pipeline.reconciler].map((fn) => ({ Ref: logicalId(stack, fn.logGroup) })).sort(),
    );
    for (const filter of filters) {
      expect(filter.FilterPattern).toBe(
        '{ ($.error.name = "PlatformFundsError") || ($.error.name = "RailConfigError") || ($.error.name = "RailAmbiguousAnswerError") }',
      );
      expect(filter.MetricTransformations).toEqual([
        {
          MetricNamespace: METRICS_NAMESPACE,
          MetricName: 'RailNeedsOperator',
          MetricValue: '1',
          Dimensions: [{ Key: 'stage', Value: '$.stage' }],
        },
      ]);
    }
    expect(alarm('PayoutRailNeedsOperator')).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: 'RailNeedsOperator',
      Dimensions: [{ Name: 'stage', Value: 'test' }],
      Statistic: 'Sum',
      Threshold: 1,
    });
  });

  it('fire when the sweeper fails repeatedly or stops running', () => {
    const fn = { Name: 'FunctionName', Value: { Ref: fnId(sweeper) } };
    expect(alarm('SweeperErrors')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [fn],
      Threshold: 1,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
    });
    expect(alarm('SweeperNotRunning')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Invocations',
      Dimensions: [fn],
      Period: 900,
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      TreatMissingData: 'breaching',
    });
  });

  it("fire on the first x402 settlement the reconciler finds not finalized (credited at 'confirmed', then failed or gone)", () => {
    const filters = ofType('AWS::Logs::MetricFilter')
      .map(([, r]) => r.Properties ?? {})
      .filter((f) => JSON.stringify(f.MetricTransformations).includes('X402FinalityMismatches'));
    expect(filters).toEqual([
      {
        LogGroupName: { Ref: logicalId(stack, pipeline.reconcilerSchedule.fn.logGroup) },
        FilterPattern: '{ $.message = "x402 settlement not finalized" }',
        MetricTransformations: [
          {
            MetricNamespace: METRICS_NAMESPACE,
            MetricName: 'X402FinalityMismatches',
            MetricValue: '1',
            Dimensions: [{ Key: 'stage', Value: '$.stage' }],
          },
        ],
      },
    ]);
    expect(alarm('X402FinalityMismatch')).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: 'X402FinalityMismatches',
      Dimensions: [{ Name: 'stage', Value: 'test' }],
      Statistic: 'Sum',
      Threshold: 1,
    });
  });

  it("fire while a confirmed x402 payment is held because the agent's balance is at its cap (settle's and every reconciler run's ERROR line)", () => {
    const filters = ofType('AWS::Logs::MetricFilter')
      .map(([, r]) => r.Properties ?? {})
      .filter((f) => JSON.stringify(f.MetricTransformations).includes('X402CreditsHeldAtLimit'));
    const settleFn = api.functions.get('x402-settle');
    if (!settleFn) throw new Error('no x402-settle function');
    expect(filters.map((f) => f.LogGroupName)).toEqual(
      expect.arrayContaining([
        { Ref: logicalId(stack, pipeline.reconcilerSchedule.fn.logGroup) },
        { Ref: logicalId(stack, settleFn.logGroup) },
      ]),
    );
    expect(filters).toHaveLength(2);
    for (const filter of filters) {
      expect(filter).toMatchObject({
        FilterPattern: '{ $.message = "x402 credit refused: balance limit" }',
        MetricTransformations: [
          {
            MetricNamespace: METRICS_NAMESPACE,
            MetricName: 'X402CreditsHeldAtLimit',
            MetricValue: '1',
            Dimensions: [{ Key: 'stage', Value: '$.stage' }],
          },
        ],
      });
    }
    // The reconciler runs every 2 minutes by default: every 5-minute period holds a retry's line.
    expect(config.reconcileEveryMinutes).toBe(2);
    expect(alarm('X402CreditHeldAtLimit')).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: 'X402CreditsHeldAtLimit',
      Dimensions: [{ Name: 'stage', Value: 'test' }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    expect(String(alarm('X402CreditHeldAtLimit').AlarmDescription)).toMatch(
      /owed to the agent.*until the agent withdraws.*X402TX#<messageHash>/,
    );
    // A slower reconciler gets a period that still holds one of its runs.
    expect(heldAtLimitPeriod(15).toMinutes()).toBe(16);
  });

  it('fire on the first on-chain transfer a rail refused to credit because another rail had (the CHAINCREDIT# guard)', () => {
    const filters = ofType('AWS::Logs::MetricFilter')
      .map(([, r]) => r.Properties ?? {})
      .filter((f) => JSON.stringify(f.MetricTransformations).includes('TransfersCreditedElsewhere'));
    const settleFn = api.functions.get('x402-settle');
    if (!settleFn) throw new Error('no x402-settle function');
    // Every function whose rail credits on-chain money logs the guard's refusal.
    expect(filters.map((f) => f.LogGroupName)).toEqual(
      expect.arrayContaining([
        { Ref: logicalId(stack, pipeline.reconcilerSchedule.fn.logGroup) },
        { Ref: logicalId(stack, settleFn.logGroup) },
        { Ref: logicalId(stack, stack.topupWatcher.fn.logGroup) },
      ]),
    );
    expect(filters).toHaveLength(3);
    for (const filter of filters) {
      expect(filter).toMatchObject({
        FilterPattern: `{ $.message = "${TRANSFER_CREDITED_ELSEWHERE_LOG_MESSAGE}" }`,
        MetricTransformations: [
          {
            MetricNamespace: METRICS_NAMESPACE,
            MetricName: 'TransfersCreditedElsewhere',
            MetricValue: '1',
            Dimensions: [{ Key: 'stage', Value: '$.stage' }],
          },
        ],
      });
    }
    expect(alarm('TransferCreditedElsewhere')).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: 'TransfersCreditedElsewhere',
      Dimensions: [{ Name: 'stage', Value: 'test' }],
      Statistic: 'Sum',
      Threshold: 1,
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    expect(String(alarm('TransferCreditedElsewhere').AlarmDescription)).toMatch(/CHAINCREDIT#<signature>/);
  });

  it("fire on the fee payer's x402 spend in an hour and on the hot wallet's SOL running low and on purchases the reconciler cannot reach, on the exact metrics the functions emit", () => {
    const saved = { ...process.env };
    let emitted: Record<string, unknown>;
    try {
      process.env.STAGE = 'test';
      resetForTests();
      metrics().addMetric(X402_FEE_PAYER_LAMPORTS_METRIC, 'Count', 10_001);
      metrics().addMetric(HOT_WALLET_LAMPORTS_METRIC, 'Count', 9_000_000_000);
      metrics().addMetric(X402_PURCHASES_UNSEARCHED_METRIC, 'Count', 1);
      emitted = metrics().serializeMetrics() as unknown as Record<string, unknown>;
      metrics().clearMetrics();
    } finally {
      process.env = saved;
      resetForTests();
    }
    const directive = (emitted._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] })
      .CloudWatchMetrics[0];
    const dimensions = new Set((directive?.Dimensions[0] ?? []).map((name) => JSON.stringify({ Name: name, Value: emitted[name] })));
    expect(directive?.Metrics.map((m) => m.Name).sort()).toEqual(
      [HOT_WALLET_LAMPORTS_METRIC, X402_FEE_PAYER_LAMPORTS_METRIC, X402_PURCHASES_UNSEARCHED_METRIC].sort(),
    );
    expect(alarm('X402FeePayerSpend')).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: X402_FEE_PAYER_LAMPORTS_METRIC,
      Statistic: 'Sum',
      Period: 3600,
      Threshold: X402_FEE_SPEND_ALARM_LAMPORTS_PER_HOUR,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    // Below the floor pages; no reading (x402 not set up yet) does not: ReconcilerNotRunning covers a dead reconciler.
    expect(alarm('HotWalletSolLow')).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: HOT_WALLET_LAMPORTS_METRIC,
      Statistic: 'Minimum',
      Period: heldAtLimitPeriod(config.reconcileEveryMinutes).toSeconds(),
      Threshold: HOT_WALLET_MIN_LAMPORTS,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    // Any purchase left unsearched on three reconciler periods in a row pages (one lagging node's run does not).
    expect(alarm('X402PurchasesUnsearched')).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: X402_PURCHASES_UNSEARCHED_METRIC,
      Statistic: 'Maximum',
      Period: heldAtLimitPeriod(config.reconcileEveryMinutes).toSeconds(),
      Threshold: 1,
      EvaluationPeriods: 3,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(String(alarm('X402PurchasesUnsearched').AlarmDescription)).toMatch(/runbooks\.md/);
    for (const name of ['X402FeePayerSpend', 'HotWalletSolLow', 'X402PurchasesUnsearched']) {
      expect(new Set((alarm(name).Dimensions as unknown[]).map((d) => JSON.stringify(d)))).toEqual(dimensions);
    }
  });

  it('fire when the sweeper logs errors for 15 minutes in a row (a due charge that fails on every run keeps its hold)', () => {
    const filters = ofType('AWS::Logs::MetricFilter')
      .map(([, r]) => r.Properties ?? {})
      .filter((f) => JSON.stringify(f.MetricTransformations).includes('SweeperErrorLogs'));
    expect(filters).toEqual([
      {
        LogGroupName: { Ref: logicalId(stack, sweeper.logGroup) },
        FilterPattern: '{ $.level = "ERROR" }',
        MetricTransformations: [
          {
            MetricNamespace: METRICS_NAMESPACE,
            MetricName: 'SweeperErrorLogs',
            MetricValue: '1',
            Dimensions: [{ Key: 'stage', Value: '$.stage' }],
          },
        ],
      },
    ]);
    expect(alarm('ChargesNotExpiring')).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: 'SweeperErrorLogs',
      Dimensions: [{ Name: 'stage', Value: 'test' }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      EvaluationPeriods: 3,
    });
    expect(alarm('ChargesNotExpiring').DatapointsToAlarm).toBeUndefined();
  });

  /** The dimensions the Powertools metrics of functions/observability/metrics.ts carry for `name` (what an alarm must match). */
  const emittedDimensions = (name: string) => {
    const saved = { ...process.env };
    let emitted: Record<string, unknown>;
    try {
      process.env.STAGE = 'test';
      resetForTests();
      metrics().addMetric(name, 'Count', 0);
      emitted = metrics().serializeMetrics() as unknown as Record<string, unknown>;
      metrics().clearMetrics();
    } finally {
      process.env = saved;
      resetForTests();
    }
    const directive = (emitted._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] }).CloudWatchMetrics[0];
    expect(directive?.Namespace).toBe(METRICS_NAMESPACE);
    return new Set((directive?.Dimensions[0] ?? []).map((d) => JSON.stringify({ Name: d, Value: emitted[d] })));
  };
  const dimensionsOf = (name: string) => new Set((alarm(name).Dimensions as unknown[]).map((d) => JSON.stringify(d)));

  it('fire on a 5xx of any money route, from the access log, per route', () => {
    const filters = ofType('AWS::Logs::MetricFilter').map(([, r]) => r.Properties ?? {});
    const accessLogs = { Ref: logicalId(stack, stack.api.node.findChild('AccessLogs') as never) };
    expect(filters.filter((f) => JSON.stringify(f.LogGroupName) === JSON.stringify(accessLogs))).toEqual(
      expect.arrayContaining([
        {
          LogGroupName: accessLogs,
          FilterPattern: '{ $.status = "5*" }',
          MetricTransformations: [
            {
              MetricNamespace: METRICS_NAMESPACE,
              MetricName: 'Api5xxByRoute-test',
              MetricValue: '1',
              Dimensions: [{ Key: 'routeKey', Value: '$.routeKey' }],
            },
          ],
        },
        {
          LogGroupName: accessLogs,
          FilterPattern: '{ $.status = "429" }',
          MetricTransformations: [{ MetricNamespace: METRICS_NAMESPACE, MetricName: 'Api429-test', MetricValue: '1' }],
        },
      ]),
    );
    expect(MONEY_ROUTES.every((name) => ROUTES.some((r) => r.name === name))).toBe(true);
    for (const name of MONEY_ROUTES) {
      const route = ROUTES.find((r) => r.name === name);
      if (!route) throw new Error(name);
      expect(alarm(`Route5xx${routeConstructId(route)}`)).toMatchObject({
        Namespace: METRICS_NAMESPACE,
        MetricName: 'Api5xxByRoute-test',
        Dimensions: [{ Name: 'routeKey', Value: routeKey(route) }],
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        TreatMissingData: 'notBreaching',
      });
    }
    // The access log line carries the two fields the filters read.
    const [, stage] = ofType('AWS::ApiGatewayV2::Stage')[0] ?? [];
    const format = JSON.parse(String((stage?.Properties?.AccessLogSettings as { Format: string }).Format)) as Record<string, string>;
    expect(format).toMatchObject({ status: '$context.status', routeKey: '$context.routeKey' });
  });

  it('fire on the share of 429s, from a minimum number of requests', () => {
    const props = alarm('Api429Rate');
    expect(props).toMatchObject({ Threshold: config.api429RatePercent, ComparisonOperator: 'GreaterThanThreshold' });
    const metrics = props.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string } } }[];
    expect(metrics.find((m) => m.Expression)?.Expression).toBe(
      `IF(requests >= ${config.api5xxMinRequests}, 100 * throttled / requests, 0)`,
    );
    expect(
      metrics
        .filter((m) => m.MetricStat)
        .map((m) => m.MetricStat?.Metric.MetricName)
        .sort(),
    ).toEqual(['Api429-test', 'Count']);
  });

  it('fire on DynamoDB throttling of any operation the service sends, and on a sustained share of transaction conflicts', () => {
    const throttles = alarm('DynamoDbThrottles');
    expect(throttles).toMatchObject({ Threshold: 1, EvaluationPeriods: 3, DatapointsToAlarm: 2 });
    const operations = (
      throttles.Metrics as { MetricStat?: { Metric: { MetricName: string; Dimensions: { Name: string; Value: unknown }[] } } }[]
    )
      .filter((m) => m.MetricStat)
      .map((m) => {
        expect(m.MetricStat?.Metric.MetricName).toBe('ThrottledRequests');
        return m.MetricStat?.Metric.Dimensions.find((d) => d.Name === 'Operation')?.Value;
      });
    expect(operations.sort()).toEqual(
      ['BatchGetItem', 'DeleteItem', 'GetItem', 'PutItem', 'Query', 'Scan', 'TransactWriteItems', 'UpdateItem'].sort(),
    );
    const conflicts = alarm('DynamoDbTransactionConflicts');
    expect(conflicts).toMatchObject({ ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 3, DatapointsToAlarm: 2 });
    const names = (conflicts.Metrics as { MetricStat?: { Metric: { MetricName: string }; Stat: string } }[])
      .filter((m) => m.MetricStat)
      .map((m) => `${m.MetricStat?.Metric.MetricName}/${m.MetricStat?.Stat}`)
      .sort();
    expect(names).toEqual(['SuccessfulRequestLatency/SampleCount', 'TransactionConflict/Sum']);
  });

  it('fire when the oldest webhook delivery message has waited 15 minutes', () => {
    expect(alarm('WebhookQueueAge')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack, stack.webhooks.queue), 'QueueName'] } }],
      Statistic: 'Maximum',
      Threshold: 900,
    });
  });

  it('fire when the sweeper lags, on the exact gauge the sweeper emits', () => {
    expect(alarm('SweeperLag')).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: SWEEPER_LAG_METRIC,
      Statistic: 'Maximum',
      Threshold: SWEEPER_MAX_LAG.toSeconds(),
    });
    expect(dimensionsOf('SweeperLag')).toEqual(emittedDimensions(SWEEPER_LAG_METRIC));
  });

  it('fire when the daily ledger audit does not hold, and when it has not reported for a day (missing data breaches)', () => {
    expect(alarm('LedgerAuditFails')).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: LEDGER_AUDIT_PROBLEMS_METRIC,
      Statistic: 'Maximum',
      Period: 3600,
      EvaluationPeriods: LEDGER_AUDIT_WINDOW_HOURS,
      DatapointsToAlarm: LEDGER_AUDIT_WINDOW_HOURS,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'breaching',
    });
    expect(dimensionsOf('LedgerAuditFails')).toEqual(emittedDimensions(LEDGER_AUDIT_PROBLEMS_METRIC));
    // A day and a bit: a run a few minutes late never pages; CloudWatch allows up to 7 days for hourly periods.
    expect(LEDGER_AUDIT_WINDOW_HOURS).toBeGreaterThan(24);
    expect(LEDGER_AUDIT_WINDOW_HOURS * 3600).toBeLessThanOrEqual(7 * 86_400);
  });

  it('have no e-mail subscription unless alarmEmail is configured', () => {
    template.resourceCountIs('AWS::SNS::Subscription', 0);
  });
});
