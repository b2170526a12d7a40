/**
 * The HTTP API: one function per route of functions/api/routes.ts, each with exactly the grants
 * its RouteSpec lists, behind an explicit `$default` stage with access logs and throttling. Under
 * the stage's adminAuth `iam` the operator's routes are IAM-authorized by API Gateway, and one
 * managed policy grants execute-api:Invoke on exactly them (docs/operating/runbooks.md "Admin access").
 *
 * The route functions (function, role, policy, log group) and their integrations and invoke
 * permissions live in one nested stack per part of the API (lib/api-parts.ts), each with
 * CloudFormation's 500 resources of its own. The API, its stage and the routes stay here in the
 * parent: a route moved to another stack would be created there before it is deleted here, and API
 * Gateway refuses a second route with the same key, so the deploy would fail. Kept here, a route
 * stays as it is and is updated in place to point at its new integration (docs/operating/stack.md "Nested stacks").
 */
import { NestedStack, Stack, Token, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { handlerEntry, ROUTES, type RouteSpec, readsAdminKey, recognisesAdmin } from '../functions/registry/routes';
import { type ApiPart, apiPart, apiPartConstructId, PartLambdaIntegration } from './api-parts';
import type { DataStore } from './data-store';
import { grantReadSecrets, grantSealedAnswers, grantSendToQueue, grantTable } from './grants';
import { STATEFUL_REMOVAL } from './removal';
import { ServiceFunction } from './service-function';
import type { HotWalletSigner } from './signer';
import { certificateRegionProblem, type StageConfig } from './stage-config';
import { paypalOrdersEnvironment, topupEnvironment } from './topup-watcher';
import { grantWebhookSecrets } from './webhook-pipeline';
import { x402Environment } from './x402';

export interface ServiceHttpApiProps {
  config: StageConfig;
  data: DataStore;
  /** The payout queue, for routes with `queue: true`. */
  payoutQueue: sqs.IQueue;
  /** The hot-wallet signer, which routes with `x402: 'settle'` invoke. */
  signer: HotWalletSigner;
  routes?: readonly RouteSpec[];
}

/** `register-agent` → `RegisterAgent` (construct ids, hence logical ids, stay readable). */
export const routeConstructId = (route: RouteSpec): string =>
  route.name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');

export interface RouteThrottle {
  rateLimit: number;
  burstLimit: number;
}

const publicThrottle = (config: StageConfig): RouteThrottle => ({
  rateLimit: config.publicRouteRateLimit,
  burstLimit: config.publicRouteBurstLimit,
});

const consolePages = (config: StageConfig): RouteThrottle => ({
  rateLimit: config.consolePageRateLimit,
  burstLimit: config.consolePageBurstLimit,
});

const consoleSignIn = (config: StageConfig): RouteThrottle => ({
  rateLimit: config.consoleSignInRateLimit,
  burstLimit: config.consoleSignInBurstLimit,
});

/**
 * Routes with a throttle of their own, below the stage's. Registration is public and each call
 * writes an agent: without this, one client could spend the whole stage's rate on it.
 */
export const ROUTE_THROTTLES: Record<string, (config: StageConfig) => RouteThrottle> = {
  'register-agent': (config) => ({ rateLimit: config.registerRateLimit, burstLimit: config.registerBurstLimit }),
  // The x402 facilitator (docs/design.md §19): any seller's stock middleware calls it for any buyer,
  // with a key anyone can register, and every settle spends the fee payer's SOL on chain. It gets
  // the public routes' throttle, so it cannot spend the stage's whole rate either.
  'x402-verify': publicThrottle,
  'x402-settle': publicThrottle,
  // The console (docs/operating/stages.md "Throttles"): signed-in payers' pages apart from the sign-in
  // and sign-up posts anyone may send, so a flood of attempts never takes the pages' rate.
  console: consolePages,
  'console-pages': consolePages,
  'console-sign-in': consoleSignIn,
  'console-passkey-sign-in': consoleSignIn,
  'console-sign-up': consoleSignIn,
};

/**
 * A route's own throttle: its entry in ROUTE_THROTTLES, else, for a public route (RouteSpec
 * `public`), the stage's public-route throttle. Anyone may call a public route, so none of them
 * may spend the stage's whole rate and starve the authenticated ones (charges, withdrawals).
 */
export function routeThrottle(route: RouteSpec, config: StageConfig): RouteThrottle | undefined {
  const own = ROUTE_THROTTLES[route.name]?.(config);
  if (own) return own;
  return route.public ? publicThrottle(config) : undefined;
}

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
  // Who called an IAM-authorized (admin) route: the audit trail of money an operator created.
  caller: '$context.identity.userArn',
};

export class ServiceHttpApi extends Construct {
  readonly api: apigw.HttpApi;
  readonly stage: apigw.HttpStage;
  /** Route name → its function. */
  readonly functions = new Map<string, ServiceFunction>();
  /** The nested stack of each part of the API that has routes (`AgentRoutes`, `PayerRoutes`, `AdminRoutes`, `PublicRoutes`). */
  readonly parts = new Map<ApiPart, NestedStack>();
  /** Under adminAuth `iam`: execute-api:Invoke on exactly the admin routes, for operators' roles. */
  readonly adminPolicy: iam.ManagedPolicy | undefined;
  /** The stage's custom domain (`domainName`), mapped to the `$default` stage. */
  readonly customDomain: apigw.DomainName | undefined;
  /**
   * Where the links the API hands out point (PUBLIC_BASE_URL): the stage's `publicBaseUrl`, else
   * its custom domain, else the API's own endpoint (a deploy-time value), so links work from the
   * first deploy on.
   */
  readonly publicBaseUrl: string;

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

    this.customDomain = config.domainName && config.certificateArn ? this.domain(config.domainName, config.certificateArn) : undefined;
    this.publicBaseUrl = config.publicBaseUrl ?? (config.domainName ? `https://${config.domainName}` : this.api.apiEndpoint);

    // CloudFormation's own JSON (the L1 property is untyped, so CDK does not PascalCase it).
    const routeSettings: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }> = {};
    const adminIam = config.adminAuth === 'iam';
    const adminRoutes: { route: RouteSpec; arn: string }[] = [];
    for (const route of routes) {
      const id = routeConstructId(route);
      const part = this.partStack(apiPart(route), config);
      const fn = new ServiceFunction(part, id, {
        entry: handlerEntry(route),
        description: `${routeKey(route)} (${route.name})`,
        config,
        environment: {
          // Every function names the table (config.ts requires it), even one that never touches it.
          TABLE_NAME: data.table.tableName,
          // The operator: the admin key's ARN, or (IAM) word that API Gateway has authorized the caller.
          ...(readsAdminKey(route, config.adminAuth) ? { ADMIN_KEY_SECRET_ARN: data.adminKey.secretArn } : {}),
          ...(recognisesAdmin(route) && adminIam ? { ADMIN_AUTH: 'iam' } : {}),
          ...(route.approvalSecret ? { APPROVAL_SECRET_ARN: data.approvalSecret.secretArn } : {}),
          // Where approval links point; never the request's Host (functions/http/request.ts).
          ...(route.publicLinks ? { PUBLIC_BASE_URL: this.publicBaseUrl } : {}),
          // The console: a GET on another host (the execute-api one) goes to the public address only
          // when that is the stack's own custom domain, whose requests arrive with its name as Host;
          // behind a CDN (publicBaseUrl) they arrive with the origin's and it would loop (issue 38).
          ...(route.pages && config.domainName && !config.publicBaseUrl ? { CONSOLE_HOST_REDIRECT: '1' } : {}),
          ...(route.pages && config.rpId ? { CONSOLE_RP_ID: config.rpId } : {}),
          ...(route.queue ? { PAYOUT_QUEUE_URL: props.payoutQueue.queueUrl } : {}),
          // Withdrawals refuse the platform's own addresses as destinations (core/withdrawals.ts) and
          // ask the chain whether a USDC wallet has its token account (rails/solana.token-accounts.ts).
          ...(route.queue ? { USDC_MINT: config.usdcMint } : {}),
          // x402 refunds only queue (`queue: 'refunds'`): the worker creates a missing token account.
          ...(route.queue === true ? { SOLANA_RPC_URL_SECRET_ARN: data.solanaRpcUrl.secretArn } : {}),
          ...(route.queue && config.hotWalletAddress ? { SOLANA_HOT_WALLET_ADDRESS: config.hotWalletAddress } : {}),
          ...((route.queue || route.x402) && config.depositAddress ? { SOLANA_DEPOSIT_ADDRESS: config.depositAddress } : {}),
          // Top-ups: PayPal's Orders API (both), the deposit wallet (open), the webhook id (webhook).
          ...(route.topups === 'open' ? topupEnvironment(config, data) : {}),
          ...(route.topups === 'webhook'
            ? { ...paypalOrdersEnvironment(config, data), PAYPAL_WEBHOOK_ID_SECRET_ARN: data.paypalWebhookId.secretArn }
            : {}),
          // Webhook create routes seal the signing secret under this key (functions/store/events/webhook-secret.ts).
          ...(route.webhookSecrets ? { WEBHOOK_KMS_KEY_ID: data.webhookSecretsKey.keyArn } : {}),
          // Creations that store their answer (a key, a secret) for an idempotent replay seal it under this key (functions/store/answer-seal.ts).
          ...(route.sealedAnswers ? { IDEMPOTENCY_KMS_KEY_ID: data.idempotencySecretsKey.keyArn } : {}),
          // x402: the chain's settings and the fee payer's address. The routes whose payments the hot
          // wallet signs (settle, the purchases, MCP) ask the signer for it (lib/signer.ts); no route holds the key.
          ...(route.x402 ? x402Environment(config, data) : {}),
          ...(route.x402 === 'settle' ? props.signer.environment : {}),
          // Receipts: the key that signs them (and, to publish, the keys it replaced): lib/receipts.ts.
          ...(route.receipts ? data.receipts.environment(route.receipts) : {}),
        },
      });
      grantTable(fn.role, data.table, route.table);
      if (readsAdminKey(route, config.adminAuth)) grantReadSecrets(fn.role, [data.adminKey]);
      if (route.approvalSecret) grantReadSecrets(fn.role, [data.approvalSecret]);
      if (route.queue) grantSendToQueue(fn.role, props.payoutQueue);
      if (route.queue === true) grantReadSecrets(fn.role, [data.solanaRpcUrl]);
      if (route.topups === 'open') grantReadSecrets(fn.role, [data.paypalCredentials]);
      if (route.topups === 'webhook') grantReadSecrets(fn.role, [data.paypalCredentials, data.paypalWebhookId]);
      if (route.webhookSecrets) grantWebhookSecrets(fn.role, data, 'kms:Encrypt');
      if (route.sealedAnswers) grantSealedAnswers(fn.role, data.idempotencySecretsKey);
      if (route.x402) grantReadSecrets(fn.role, [data.solanaRpcUrl]);
      if (route.x402 === 'settle') props.signer.grantInvoke(fn.role);
      if (route.receipts) data.receipts.grant(fn.role, route.receipts);
      this.functions.set(route.name, fn);

      const httpRoute = new apigw.HttpRoute(this, `${id}Route`, {
        httpApi: this.api,
        routeKey:
          route.path === '$default' ? apigw.HttpRouteKey.DEFAULT : apigw.HttpRouteKey.with(route.path, apigw.HttpMethod[route.method]),
        // The integration and invoke permission in the route's nested stack (lib/api-parts.ts).
        integration: new PartLambdaIntegration(`${id}Integration`, fn.fn, part),
        // SigV4 and execute-api:Invoke, checked by API Gateway before the function runs.
        ...(route.admin && adminIam ? { authorizer: new HttpIamAuthorizer() } : {}),
      });
      if (route.admin && adminIam) adminRoutes.push({ route, arn: httpRoute.routeArn });
      const throttle = routeThrottle(route, config);
      if (throttle) {
        routeSettings[routeKey(route)] = { ThrottlingRateLimit: throttle.rateLimit, ThrottlingBurstLimit: throttle.burstLimit };
        // API Gateway refuses route settings for a route that does not exist yet.
        this.stage.node.addDependency(httpRoute);
      }
      if (!(route.admin && adminIam)) {
        Validations.of(httpRoute).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason:
            'Authentication is in the handler by design (spec: x-agent-key / x-user-key, and x-admin-key where the stage does not authorize admin routes with IAM; SHA-256 hash lookup, 30 s cache); registration, health and not-found are public. An API Gateway authorizer would add a second lookup per request.',
        });
      }
    }
    this.adminPolicy = adminIam ? this.adminInvokePolicy(config, adminRoutes) : undefined;
    // The HttpStage construct has no per-route settings; they go on the CloudFormation stage.
    if (Object.keys(routeSettings).length > 0) (this.stage.node.defaultChild as apigw.CfnStage).routeSettings = routeSettings;
  }

  /**
   * The API on `domainName`: a regional API Gateway domain name with the stage's ACM certificate
   * (TLS 1.2; a regional endpoint serves only a certificate of its own region), mapped to the
   * `$default` stage at its root. The DNS record is the operator's (docs/operating/first-deploy.md "The public address").
   */
  private domain(domainName: string, certificateArn: string): apigw.DomainName {
    const region = Stack.of(this).region;
    const problem = Token.isUnresolved(region) ? undefined : certificateRegionProblem(certificateArn, region);
    if (problem) throw new Error(`invalid stage configuration: certificateArn: ${problem}`);
    const domain = new apigw.DomainName(this, 'CustomDomain', {
      domainName,
      certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', certificateArn),
      endpointType: apigw.EndpointType.REGIONAL,
      securityPolicy: apigw.SecurityPolicy.TLS_1_2,
    });
    new apigw.ApiMapping(this, 'CustomDomainMapping', { api: this.api, domainName: domain, stage: this.stage });
    return domain;
  }

  /** The nested stack of one part of the API, made with its first route. */
  private partStack(part: ApiPart, config: StageConfig): NestedStack {
    let stack = this.parts.get(part);
    if (!stack) {
      stack = new NestedStack(this, apiPartConstructId(part), {
        description: `Agent Payment Service (${config.stage}): the ${part} API's route functions`,
      });
      this.parts.set(part, stack);
    }
    return stack;
  }

  /**
   * execute-api:Invoke on each admin route (its route ARN: any stage, `{param}` onwards as `*`), and
   * on nothing else. Named, so an IAM Identity Center permission set can reference it by name;
   * attached here only to the stage's adminRoleNames (roles of this account).
   */
  private adminInvokePolicy(config: StageConfig, routes: { route: RouteSpec; arn: string }[]): iam.ManagedPolicy {
    const policy = new iam.ManagedPolicy(this, 'AdminApiInvoke', {
      managedPolicyName: `agent-payment-service-${config.stage}-admin-api`,
      description: `Call the admin API of agent-payment-service ${config.stage}: users, credits, agents (docs/deploy.md)`,
      statements: [new iam.PolicyStatement({ actions: ['execute-api:Invoke'], resources: routes.map((r) => r.arn) })],
    });
    config.adminRoleNames.forEach((name, i) => {
      policy.attachToRole(iam.Role.fromRoleName(this, `AdminRole${i}`, name));
    });
    // cdk-nag reports each wildcard resource on its own, named by its flattened template text.
    for (const { arn } of routes) {
      Validations.of(policy).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${flattenForNag(Stack.of(this).resolve(arn))}]`,
        reason:
          'One admin route: the first `*` is the stage (the API has one, $default), a last `*` the path parameter (a user, agent or charge id), as CDK writes route ARNs (HttpRoute.routeArn). Nothing outside /api/v1/admin/ matches.',
      });
    }
    return policy;
  }

  /** The API's base URL (the `$default` stage has no path prefix). */
  get url(): string {
    return this.stage.url;
  }
}

/**
 * A resolved template value as cdk-nag names it in a finding (its flattenCfnReference): strings as
 * they are, `Ref` as `<Name>`, `Fn::GetAtt` as `<Name.Attr>`, `Fn::Join` joined. Route ARNs hold
 * only these; whether region and account are literal or pseudo parameters depends on the stage's env.
 */
function flattenForNag(value: unknown): string {
  if (typeof value === 'string') return value;
  const node = value as { Ref?: string; 'Fn::GetAtt'?: [string, string]; 'Fn::Join'?: [string, unknown[]] };
  if (node.Ref !== undefined) return `<${node.Ref}>`;
  if (node['Fn::GetAtt']) return `<${node['Fn::GetAtt'].join('.')}>`;
  if (node['Fn::Join']) return node['Fn::Join'][1].map(flattenForNag).join(node['Fn::Join'][0]);
  throw new Error(`cannot name ${JSON.stringify(value)} as cdk-nag does`);
}
