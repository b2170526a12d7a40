/**
 * The HTTP API: one function per route of functions/api/routes.ts, each with exactly the grants
 * its RouteSpec lists, behind an explicit `$default` stage with access logs and throttling.
 */
import { Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { handlerEntry, ROUTES, type RouteSpec } from '../functions/api/routes';
import { GSI2 } from '../functions/store/table';
import type { DataStore } from './data-store';
import { grantReadSecrets, grantSendToQueue, grantTable, type TableIndex } from './grants';
import { STATEFUL_REMOVAL } from './removal';
import { ServiceFunction } from './service-function';
import type { StageConfig } from './stage-config';
import { paypalOrdersEnvironment, topupEnvironment } from './topup-watcher';
import { grantWebhookSecrets } from './webhook-pipeline';

export interface ServiceHttpApiProps {
  config: StageConfig;
  data: DataStore;
  /** The payout queue, for routes with `queue: true`. */
  payoutQueue: sqs.IQueue;
  routes?: readonly RouteSpec[];
}

/** `register-agent` → `RegisterAgent` (construct ids, hence logical ids, stay readable). */
export const routeConstructId = (route: RouteSpec): string =>
  route.name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');

/**
 * Routes with a throttle of their own, below the stage's. Registration is public and each call
 * writes an agent: without this, one client could spend the whole stage's rate on it.
 */
export const ROUTE_THROTTLES: Record<string, (config: StageConfig) => { rateLimit: number; burstLimit: number }> = {
  'register-agent': (config) => ({ rateLimit: config.registerRateLimit, burstLimit: config.registerBurstLimit }),
};

/**
 * Indexes a route queries beyond GSI1 (lib/grants.ts), by route name. Only the user's history reads
 * GSI2 (functions/store/charge.repository.ts `listUserCharges`); a route that starts querying an
 * index must be added here, or DynamoDB refuses it on AWS (locally nothing checks IAM).
 */
export const ROUTE_INDEXES: Record<string, readonly TableIndex[]> = {
  'user-list-charges': [GSI2.indexName],
};

export const routeKey = (route: RouteSpec): string => (route.path === '$default' ? '$default' : `${route.method} ${route.path}`);

/**
 * Access log fields. No headers, no query strings, no bodies and no path: keys travel in headers,
 * and a path can carry a capability (`/approve/<token>`: whoever holds it decides the charge), so
 * the route key (`GET /approve/{token}`) says which route it was instead.
 */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  time: '$context.requestTime',
  ip: '$context.identity.sourceIp',
  routeKey: '$context.routeKey',
  method: '$context.httpMethod',
  status: '$context.status',
  latencyMs: '$context.responseLatency',
  integrationLatencyMs: '$context.integrationLatency',
  integrationStatus: '$context.integrationStatus',
  integrationError: '$context.integrationErrorMessage',
  responseLength: '$context.responseLength',
  lambdaRequestId: '$context.integration.requestId',
};

export class ServiceHttpApi extends Construct {
  readonly api: apigw.HttpApi;
  readonly stage: apigw.HttpStage;
  /** Route name → its function. */
  readonly functions = new Map<string, ServiceFunction>();

  constructor(scope: Construct, id: string, props: ServiceHttpApiProps) {
    super(scope, id);
    const { config, data } = props;
    const routes = props.routes ?? ROUTES;

    this.api = new apigw.HttpApi(this, 'Api', {
      apiName: `agent-payment-service-${config.stage}`,
      description: 'Agent Payment Service (one Lambda per route)',
      // The stage below is declared explicitly so it can carry access logs and throttling.
      createDefaultStage: false,
    });

    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: config.logRetentionDays as logs.RetentionDays,
      removalPolicy: STATEFUL_REMOVAL,
    });
    this.stage = new apigw.HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: config.throttleRateLimit, burstLimit: config.throttleBurstLimit },
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });

    // CloudFormation's own JSON (the L1 property is untyped, so CDK does not PascalCase it).
    const routeSettings: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }> = {};
    for (const route of routes) {
      const id = routeConstructId(route);
      const fn = new ServiceFunction(this, id, {
        entry: handlerEntry(route),
        description: `${routeKey(route)} (${route.name})`,
        config,
        environment: {
          // Every function names the table (config.ts requires it), even one that never touches it.
          TABLE_NAME: data.table.tableName,
          ...(route.adminSecret ? { ADMIN_KEY_SECRET_ARN: data.adminKey.secretArn } : {}),
          ...(route.approvalSecret ? { APPROVAL_SECRET_ARN: data.approvalSecret.secretArn } : {}),
          // Where approval links point; never the request's Host (functions/http/request.ts).
          ...(route.publicLinks ? { PUBLIC_BASE_URL: config.publicBaseUrl } : {}),
          ...(route.queue ? { PAYOUT_QUEUE_URL: props.payoutQueue.queueUrl } : {}),
          // Withdrawals refuse the platform's own addresses as destinations (core/withdrawals.ts).
          ...(route.queue ? { USDC_MINT: config.usdcMint } : {}),
          ...(route.queue && config.hotWalletAddress ? { SOLANA_HOT_WALLET_ADDRESS: config.hotWalletAddress } : {}),
          // Top-ups: PayPal's Orders API (both), the deposit wallet (open), the webhook id (webhook).
          ...(route.topups === 'open' ? topupEnvironment(config, data) : {}),
          ...(route.topups === 'webhook'
            ? { ...paypalOrdersEnvironment(config, data), PAYPAL_WEBHOOK_ID_SECRET_ARN: data.paypalWebhookId.secretArn }
            : {}),
          // Webhook create routes seal the signing secret under this key (functions/store/webhook-secret.ts).
          ...(route.webhookSecrets ? { WEBHOOK_KMS_KEY_ID: data.webhookSecretsKey.keyArn } : {}),
        },
      });
      grantTable(fn.role, data.table, route.table, { indexes: ROUTE_INDEXES[route.name] ?? [] });
      if (route.adminSecret) grantReadSecrets(fn.role, [data.adminKey]);
      if (route.approvalSecret) grantReadSecrets(fn.role, [data.approvalSecret]);
      if (route.queue) grantSendToQueue(fn.role, props.payoutQueue);
      if (route.topups === 'open') grantReadSecrets(fn.role, [data.paypalCredentials]);
      if (route.topups === 'webhook') grantReadSecrets(fn.role, [data.paypalCredentials, data.paypalWebhookId]);
      if (route.webhookSecrets) grantWebhookSecrets(fn.role, data, 'kms:Encrypt');
      this.functions.set(route.name, fn);

      const httpRoute = new apigw.HttpRoute(this, `${id}Route`, {
        httpApi: this.api,
        routeKey:
          route.path === '$default' ? apigw.HttpRouteKey.DEFAULT : apigw.HttpRouteKey.with(route.path, apigw.HttpMethod[route.method]),
        integration: new HttpLambdaIntegration(`${id}Integration`, fn.fn),
      });
      const throttle = ROUTE_THROTTLES[route.name]?.(config);
      if (throttle) {
        routeSettings[routeKey(route)] = { ThrottlingRateLimit: throttle.rateLimit, ThrottlingBurstLimit: throttle.burstLimit };
        // API Gateway refuses route settings for a route that does not exist yet.
        this.stage.node.addDependency(httpRoute);
      }
      Validations.of(httpRoute).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'Authentication is in the handler by design (spec: x-agent-key / x-user-key / x-admin-key, SHA-256 hash lookup, 30 s cache); registration, health and not-found are public. An API Gateway authorizer would add a second lookup per request.',
      });
    }
    // The HttpStage construct has no per-route settings; they go on the CloudFormation stage.
    if (Object.keys(routeSettings).length > 0) (this.stage.node.defaultChild as apigw.CfnStage).routeSettings = routeSettings;
  }

  /** The API's base URL (the `$default` stage has no path prefix). */
  get url(): string {
    return this.stage.url;
  }
}
