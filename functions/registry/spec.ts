/**
 * The shape of an entry of the operation registry (functions/registry/routes.ts assembles them from
 * the areas' modules beside this one): what the stack, the local server, the handlers' configuration
 * and the MCP function read of a route, and its OpenAPI operation.
 */
import type { TableGrant } from '../store/access';
import type { OperationDoc } from './doc';

/** How a stage recognises the operator: API Gateway IAM authorization, or the static x-admin-key. */
export type AdminAuth = 'iam' | 'key';

export interface RouteSpec<N extends string = string> {
  /** Function name stem and handler file: functions/api/<name>.handler.ts. */
  name: N;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'ANY';
  /** API Gateway route path, `{param}` style; `$default` catches everything unmatched. */
  path: string;
  /**
   * No key or signature of ours in front of it: anyone may call it. The stack gives every public
   * route a throttle of its own (lib/http-api.ts `routeThrottle`), and a test holds every handler
   * that reads no key to this flag. Mark new consent and x402 routes with it.
   */
  public?: true;
  /**
   * What it may do to the table: the repository operations it calls (functions/store/access.ts),
   * each granted on the key families it touches and no other (`dynamodb:LeadingKeys`).
   */
  table: TableGrant;
  /**
   * Sends to the payout queue: `true` for withdrawals, which also ask the chain whether a USDC
   * destination has its token account (the RPC URL's secret); `'refunds'` for x402 refunds, which
   * only queue (the worker creates what is missing) and so are not given the RPC URL.
   */
  queue?: true | 'refunds';
  /**
   * An operator route (`/api/v1/admin/**`). Under the stage's adminAuth `iam`, API Gateway authorizes
   * it with IAM (SigV4, execute-api:Invoke) and its function gets no admin key; under `key`, its
   * function reads the admin key secret and checks x-admin-key.
   */
  admin?: boolean;
  /** Not an operator route, but x-admin-key may stand in for its own credential, under adminAuth
   * `key` only (get-charge: the operator reads any charge). */
  adminKeyAlternative?: boolean;
  /**
   * What the operator's read through `adminKeyAlternative` needs on top of `table`. The function
   * gets both (ROUTES folds it into `table`); a tool that runs the route's use case for an agent
   * (MCP) needs only `table`.
   */
  operatorTable?: TableGrant;
  /** Seals webhook signing secrets (KMS Encrypt on AWS). */
  webhookSecrets?: boolean;
  /**
   * Stores answers that hold a secret (a key, a signing secret) for an idempotent replay, sealed
   * (functions/store/answer-seal.ts): KMS GenerateDataKey and Decrypt on the stage's idempotency
   * key on AWS, pinned to the sealing context; the local key otherwise (docs/idempotency.md).
   */
  sealedAnswers?: boolean;
  /** Makes or checks approval links: reads the approval secret. */
  approvalSecret?: boolean;
  /** Hands out links to the API (approval links, receipt links): gets PUBLIC_BASE_URL, which it requires; links are never built from Host. */
  publicLinks?: boolean;
  /** Web pages for people (the console, DESIGN §21), not API operations: the OpenAPI document leaves them out. */
  pages?: true;
  /** Top-ups (docs/topups.md): `open` creates PayPal orders and hands out the deposit wallet;
   * `webhook` verifies PayPal's webhooks and captures orders. Both get PayPal's settings. */
  topups?: 'open' | 'webhook';
  /** x402 (docs/x402.md): `read` gets the chain's settings and the fee payer's public address;
   * `settle` also the hot wallet's secret, to sign as the fee payer. */
  x402?: 'read' | 'settle';
  /**
   * Receipts (docs/receipts.md): `sign` signs them (kms:Sign and kms:GetPublicKey on the current
   * receipt key on AWS); `publish` lists the public keys (kms:GetPublicKey on the current and the
   * previous keys). Both get the key's configuration (NEEDS_RECEIPTS).
   */
  receipts?: 'sign' | 'publish';
  /**
   * Its OpenAPI operation (summary, credentials, the schemas the handler validates with, one example
   * per answer), written in the entry itself. A thunk: the examples run validators, and only the
   * OpenAPI generator (functions/api/openapi/document.ts) asks for it. Every route has one but the
   * console's pages and the `$default` catch-all (`DocumentedRoute`).
   */
  operation?: () => OperationDoc;
}

/**
 * A route the OpenAPI document describes: its entry carries its operation. Each area's entries are
 * checked against it (`satisfies readonly DocumentedRoute[]`), so an entry without one fails to compile.
 */
export type DocumentedRoute = RouteSpec & { operation: () => OperationDoc; pages?: never };

/** The console's pages (DESIGN §21): for people, not operations of the document; no operation. */
export type PageRoute = RouteSpec & { pages: true; operation?: never };
