/**
 * The operation registry: every HTTP route as data, keyed by its `RouteName`. The local adapter
 * (bin/local) serves these, and the CDK stack gives each its own Lambda with exactly the grants and
 * environment its entry's capabilities call for (lib/http-api.ts). From the same entries come each
 * handler's configuration needs (`configNeeds`), the MCP tools and what the MCP function may
 * do (`MCP_TOOLS`, the union of their routes' needs), and the tables keyed by `RouteName` (the
 * OpenAPI operations, functions/api/openapi/operations.ts; the MCP tools' implementations,
 * functions/mcp/tools.ts): a route or tool missing from one of them fails to compile.
 * Adding a route: docs/registry.md. A handler module exports `handler`.
 *
 * It lives below both adapters (functions/api and functions/mcp read it; it reads neither). The
 * route handlers do not import it (its ~19 KB would take the API functions past their bundle budget):
 * each reads its needs from functions/registry/needs.generated.ts (`loadConfig({ require: NEEDS.<route> })`),
 * which `npm run docs` writes from `configNeeds` (bin/registry/needs.ts), and
 * test/observability/config-init.test.ts holds each handler to its own entry's.
 */
import {
  type Config,
  type ConfigNeed,
  NEEDS_ADMIN_AUTH,
  NEEDS_APPROVAL_SECRET,
  NEEDS_PAYPAL_ORDERS,
  NEEDS_PAYPAL_WEBHOOK,
  NEEDS_PUBLIC_BASE_URL,
  NEEDS_USDC_TOPUPS,
  NEEDS_WEBHOOK_SECRETS,
  NEEDS_WITHDRAWALS,
  NEEDS_X402,
  NEEDS_X402_SETTLE,
} from '../config';
import { combine, type TableGrant, uses } from '../store/access';

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
  /** Sends withdrawals to the payout queue. */
  queue?: boolean;
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
  /** Makes or checks approval links: reads the approval secret. */
  approvalSecret?: boolean;
  /** Hands out links to the API (approval links): gets PUBLIC_BASE_URL, which it requires; links are never built from Host. */
  publicLinks?: boolean;
  /** Web pages for people (the console, DESIGN §21), not API operations: the OpenAPI document leaves them out. */
  pages?: true;
  /** Top-ups (docs/topups.md): `open` creates PayPal orders and hands out the deposit wallet;
   * `webhook` verifies PayPal's webhooks and captures orders. Both get PayPal's settings. */
  topups?: 'open' | 'webhook';
  /** x402 (docs/x402.md): `read` gets the chain's settings and the fee payer's public address;
   * `settle` also the hot wallet's secret, to sign as the fee payer. */
  x402?: 'read' | 'settle';
}

/** What charging takes (the charge route and the MCP tool): both keys (account or grant), the payer's state, the commit or the refusal. */
const CHARGE = uses(
  'agentKeyLookup',
  'userKeyLookup',
  'grantKeyLookup',
  'idempotentCommand',
  'readPayerState',
  'commitCharge',
  'recordFailedCharge',
);
const LIST_CHARGES = uses('agentKeyLookup', 'listCharges', 'readAgentLedger');
const BALANCE = uses('agentKeyLookup', 'readAgentLedger');
const WITHDRAW = uses('agentKeyLookup', 'idempotentCommand', 'readAgentLedger', 'readFeeBasis', 'commitWithdrawal');
const LIST_WITHDRAWALS = uses('agentKeyLookup', 'listPayouts', 'getPayout');
/** Capture or release a hold: the charge read, then one settlement with the kill switch. */
const CAPTURE = uses('agentKeyLookup', 'idempotentCommand', 'getCharge', 'commitCapture');
const RELEASE = uses('agentKeyLookup', 'idempotentCommand', 'getCharge', 'commitRelease');
const REFUND = uses('agentKeyLookup', 'idempotentCommand', 'readChargeAndLedger', 'commitRefund');
/** A user's (or an approval link's) decision on a PENDING charge: found by its marker, or by id once decided. */
const DECIDE = uses('getPendingCharge', 'getChargeById', 'chargeBeforeSettling');
const APPROVE = combine(DECIDE, uses('settleApproval'));
const DECLINE = combine(DECIDE, uses('settleReturn'));
/** A rotation of the account key releases the open charges the old key made (account-key.ts): listed, then each as a decline. */
const RELEASE_OPEN_CHARGES = combine(DECLINE, uses('listUserCharges'));
/** The approval page's reads: the charge, its agent, and the grant it was made under (revoked or ended: no Approve). */
const APPROVAL_PAGE = uses('getPendingCharge', 'getChargeById', 'getCharge', 'getAgentById', 'getGrant');
const WEBHOOKS = {
  create: uses('createWebhook'),
  list: uses('getWebhooks'),
  delete: uses('deleteWebhook'),
  deliveries: uses('getWebhooks', 'listDeliveryAttempts'),
  test: uses('getWebhooks', 'testPingWindow', 'appendOutbox'),
};
const AGENT = uses('agentKeyLookup');
/** Settling an x402 payment: its claim looked up, claimed, credited once, or ended when it failed on chain. */
const X402_SETTLE = uses(
  'agentKeyLookup',
  'idempotentCommand',
  'claimX402Settlement',
  'getX402Settlement',
  'creditX402Settlement',
  'failX402Settlement',
  'bindX402PaymentIdentifier',
);
/** Verifying an x402 payment: a claimed one is refused; its payment identifier bound (no money). */
const X402_VERIFY = uses('agentKeyLookup', 'getX402Settlement', 'bindX402PaymentIdentifier');
/** x402 purchases (DESIGN §22): a hold made as a charge is, then its payment signed and recorded once. */
const PURCHASE = combine(CHARGE, uses('getCharge', 'recordSignedPurchase'));
const READ_PURCHASE = uses('agentKeyLookup', 'getCharge', 'recordSignedPurchase');
const USER = uses('userKeyLookup');
/** Issuing a grant (the user API or the consent page): the agent named, the grant, its key and events, the limit. */
const ISSUE_GRANT = uses('getAgentById', 'createGrant', 'reclaimExpiredGrants');
/** An agent asks for a grant (the route and the MCP tool), and polls the request, claiming the key once. */
const REQUEST_GRANT = uses('agentKeyLookup', 'idempotentCommand', 'createGrantRequest');
const READ_GRANT_REQUEST = uses('agentKeyLookup', 'getGrantRequest', 'claimGrantRequest', 'getGrant');

/**
 * The console (DESIGN §21, docs/console.md): its sessions, passkeys, challenges and rate windows,
 * the account key's lookup (sign-in) and the user's creation (sign-up), and what its own pages do:
 * the Overview's reads, Approvals' decisions (the API's approve and decline).
 */
const CONSOLE_FRAMEWORK = combine(
  uses(
    'createConsoleSession',
    'readConsoleSession',
    'endConsoleSession',
    'endConsoleSessions',
    'consoleRateWindow',
    'savePasskey',
    'usePasskey',
    'listPasskeys',
    'deletePasskey',
    'webauthnChallenge',
    'userKeyLookup',
    'createUser',
    'getUser',
    'listUserCharges',
  ),
  APPROVE,
  DECLINE,
);
/** What the console's pages over money and settings (functions/console/pages) call: the user API's use cases. */
const CONSOLE_PAGES = combine(
  // The one-time key of each money or secret form (functions/console/pages/once.ts): the API's idempotency record.
  uses(
    'idempotentCommand',
    'createTopup',
    'listTopups',
    'getTopup',
    'listGrants',
    'getGrant',
    'revokeGrant',
    'getUserKeyHash',
    'replacePolicy',
    'getAgentById',
  ),
  uses(
    'rotateUserKey',
    'endAccountCredentials',
    'createUserWebhook',
    'getWebhooks',
    'deleteWebhook',
    'listDeliveryAttempts',
    'getChargeById',
  ),
  ISSUE_GRANT,
);
const CONSOLE = combine(CONSOLE_FRAMEWORK, CONSOLE_PAGES);
/** Both console routes run functions/console/handler.ts: `/console` itself is not matched by `{proxy+}`. */
const CONSOLE_ROUTE = {
  method: 'ANY',
  pages: true,
  public: true,
  table: CONSOLE,
  publicLinks: true,
  topups: 'open',
  webhookSecrets: true,
} as const;

/** The operator's hand on a disabled agent's money: held payouts (release, cancel) and refunds of its charges. */
const OPERATOR_MONEY_ROUTES = [
  { name: 'admin-list-payouts', method: 'GET', path: '/api/v1/admin/payouts', table: uses('listPayoutsByStatus'), admin: true },
  {
    name: 'admin-release-payout',
    method: 'POST',
    path: '/api/v1/admin/agents/{id}/payouts/{payoutId}/release',
    table: uses('releaseHeldPayout'),
    admin: true,
  },
  {
    name: 'admin-cancel-payout',
    method: 'POST',
    path: '/api/v1/admin/agents/{id}/payouts/{payoutId}/cancel',
    table: uses('idempotentCommand', 'getPayout', 'cancelHeldPayout'),
    admin: true,
  },
  {
    name: 'admin-list-agent-charges',
    method: 'GET',
    path: '/api/v1/admin/agents/{id}/charges',
    table: uses('getAgentById', 'listCharges', 'readAgentLedger'),
    admin: true,
  },
  {
    name: 'admin-refund-charge',
    method: 'POST',
    path: '/api/v1/admin/agents/{id}/charges/{chargeId}/refund',
    table: uses('idempotentCommand', 'readChargeAndLedger', 'commitOperatorRefund'),
    admin: true,
  },
] as const satisfies readonly RouteSpec[];

/**
 * The route table, its names kept as literal types: `RouteName` is derived from it, and the tables
 * that must cover every route (the OpenAPI operations: functions/api/openapi/operations.ts) are
 * keyed by it, so a route without its entry there fails to compile.
 */
const ROUTE_TABLE = [
  { name: 'register-agent', method: 'POST', path: '/api/v1/agents/register', public: true, table: uses('createAgent') },
  { name: 'create-charge', method: 'POST', path: '/api/v1/agents/charges', table: CHARGE, approvalSecret: true, publicLinks: true },
  { name: 'list-charges', method: 'GET', path: '/api/v1/agents/charges', table: LIST_CHARGES },
  {
    name: 'get-charge',
    method: 'GET',
    path: '/api/v1/agents/charge/{id}',
    table: uses('agentKeyLookup', 'getCharge'),
    adminKeyAlternative: true,
    operatorTable: uses('getChargeById'),
  },
  { name: 'get-balance', method: 'GET', path: '/api/v1/agents/balance', table: BALANCE },
  { name: 'withdraw', method: 'POST', path: '/api/v1/agents/withdraw', table: WITHDRAW, queue: true },
  { name: 'list-withdrawals', method: 'GET', path: '/api/v1/agents/withdraw', table: LIST_WITHDRAWALS },
  // The charge lifecycle (docs/design.md §12, docs/lifecycle.md).
  { name: 'capture-charge', method: 'POST', path: '/api/v1/agents/charge/{id}/capture', table: CAPTURE },
  { name: 'release-charge', method: 'POST', path: '/api/v1/agents/charge/{id}/release', table: RELEASE },
  { name: 'refund-charge', method: 'POST', path: '/api/v1/agents/charge/{id}/refund', table: REFUND },
  { name: 'rotate-agent-key', method: 'POST', path: '/api/v1/agents/keys/rotate', table: uses('agentKeyLookup', 'moveAgentKey') },
  // The operator (docs/operating/runbooks.md "Admin access"): IAM-authorized on AWS, x-admin-key locally.
  { name: 'admin-create-user', method: 'POST', path: '/api/v1/admin/users', table: uses('createUser'), admin: true },
  {
    name: 'admin-credit-user',
    method: 'POST',
    path: '/api/v1/admin/users/{id}/credits',
    table: uses('getUser', 'idempotentCommand', 'creditUser'),
    admin: true,
  },
  { name: 'admin-get-user', method: 'GET', path: '/api/v1/admin/users/{id}', table: uses('getUser'), admin: true },
  // A payer locked out (their key rotated by someone else): the operator hands them a new one.
  {
    name: 'admin-rotate-user-key',
    method: 'POST',
    path: '/api/v1/admin/users/{id}/keys/rotate',
    table: combine(uses('getUserKeyHash', 'rotateUserKey', 'endAccountCredentials'), RELEASE_OPEN_CHARGES),
    admin: true,
  },
  // Who waits to be enabled (?enabled=false), from an index by state: never a Scan.
  { name: 'admin-list-agents', method: 'GET', path: '/api/v1/admin/agents', table: uses('listAgents'), admin: true },
  { name: 'admin-update-agent', method: 'PATCH', path: '/api/v1/admin/agents/{id}', table: uses('setAgentEnabled'), admin: true },
  {
    name: 'admin-get-agent',
    method: 'GET',
    path: '/api/v1/admin/agents/{id}',
    table: uses('getAgentById', 'readAgentLedger'),
    admin: true,
  },
  { name: 'admin-get-charge', method: 'GET', path: '/api/v1/admin/charges/{id}', table: uses('getChargeById'), admin: true },
  // A disabled agent's money (docs/payouts.md "Held payouts", docs/lifecycle.md): held payouts, its earnings back to its payers.
  ...OPERATOR_MONEY_ROUTES,
  { name: 'user-me', method: 'GET', path: '/api/v1/users/me', table: uses('userKeyLookup', 'getUser') },
  // Each PENDING charge that waits for the payer carries its approval link (DESIGN §16).
  {
    name: 'user-list-charges',
    method: 'GET',
    path: '/api/v1/users/me/charges',
    table: uses('userKeyLookup', 'listUserCharges'),
    approvalSecret: true,
    publicLinks: true,
  },
  { name: 'user-get-policy', method: 'GET', path: '/api/v1/users/me/policy', table: uses('userKeyLookup', 'getUser') },
  {
    name: 'user-put-policy',
    method: 'PUT',
    path: '/api/v1/users/me/policy',
    table: uses('userKeyLookup', 'getAgentById', 'replacePolicy'),
  },
  { name: 'user-approve-charge', method: 'POST', path: '/api/v1/users/me/charges/{id}/approve', table: combine(USER, APPROVE) },
  { name: 'user-decline-charge', method: 'POST', path: '/api/v1/users/me/charges/{id}/decline', table: combine(USER, DECLINE) },
  // The payer ends any open hold (DESIGN §16): as a decline, whatever the hold waits for.
  { name: 'user-release-charge', method: 'POST', path: '/api/v1/users/me/charges/{id}/release', table: combine(USER, DECLINE) },
  {
    name: 'user-rotate-key',
    method: 'POST',
    path: '/api/v1/users/me/keys/rotate',
    table: combine(uses('userKeyLookup', 'rotateUserKey', 'endAccountCredentials'), RELEASE_OPEN_CHARGES),
  },
  // Grants (docs/grants.md): the account key issues, lists, reads and revokes agents' grant keys.
  { name: 'user-create-grant', method: 'POST', path: '/api/v1/users/me/grants', table: combine(USER, ISSUE_GRANT) },
  { name: 'user-list-grants', method: 'GET', path: '/api/v1/users/me/grants', table: uses('userKeyLookup', 'listGrants') },
  { name: 'user-get-grant', method: 'GET', path: '/api/v1/users/me/grants/{id}', table: uses('userKeyLookup', 'getGrant') },
  { name: 'user-revoke-grant', method: 'DELETE', path: '/api/v1/users/me/grants/{id}', table: uses('userKeyLookup', 'revokeGrant') },
  // Top-ups (docs/topups.md): money in by Solana Pay (USDC) or PayPal checkout (USD).
  {
    name: 'user-create-topup',
    method: 'POST',
    path: '/api/v1/users/me/topups',
    table: uses('userKeyLookup', 'createTopup'),
    topups: 'open',
  },
  { name: 'user-list-topups', method: 'GET', path: '/api/v1/users/me/topups', table: uses('userKeyLookup', 'listTopups') },
  { name: 'user-get-topup', method: 'GET', path: '/api/v1/users/me/topups/{id}', table: uses('userKeyLookup', 'getTopup') },
  // Public: PayPal's verify-webhook-signature call is what authenticates it.
  {
    name: 'paypal-webhook',
    method: 'POST',
    path: '/api/v1/paypal/webhooks',
    public: true,
    table: uses('paypalTransmission', 'findTopupByOrder', 'completeTopup', 'expireTopup', 'recordUnmatched', 'reverseTopupCredit'),
    topups: 'webhook',
  },
  // The approval page (HTML, docs/approvals.md): the link's token is its only credential.
  {
    name: 'approval-page',
    method: 'GET',
    path: '/approve/{token}',
    public: true,
    table: APPROVAL_PAGE,
    approvalSecret: true,
  },
  {
    name: 'approval-decide',
    method: 'POST',
    path: '/approve/{token}',
    public: true,
    // A refused approval is answered with the page saying why (its reads).
    table: combine(APPROVE, DECLINE, APPROVAL_PAGE),
    approvalSecret: true,
  },
  // Grant requests (docs/grants.md): the agent asks, the payer consents on the consent page.
  {
    name: 'agent-create-grant-request',
    method: 'POST',
    path: '/api/v1/agents/grant-requests',
    table: REQUEST_GRANT,
    approvalSecret: true,
    publicLinks: true,
  },
  {
    name: 'agent-get-grant-request',
    method: 'GET',
    path: '/api/v1/agents/grant-requests/{id}',
    table: READ_GRANT_REQUEST,
    approvalSecret: true,
    publicLinks: true,
  },
  // The consent page (HTML): the link's token shows it; Allow takes the payer's account key.
  {
    name: 'consent-page',
    method: 'GET',
    path: '/consent/{token}',
    public: true,
    // A payer signed in to the console answers without a key (DESIGN §21): the session read.
    table: uses('findConsent', 'getGrantRequest', 'getAgentById', 'readConsoleSession'),
    approvalSecret: true,
    publicLinks: true,
  },
  {
    name: 'consent-decide',
    method: 'POST',
    path: '/consent/{token}',
    public: true,
    table: combine(
      uses('findConsent', 'getGrantRequest', 'userKeyLookup', 'decideGrantRequest', 'readConsoleSession', 'getUserKeyHash'),
      ISSUE_GRANT,
    ),
    approvalSecret: true,
    publicLinks: true,
  },
  // The console (docs/console.md): payers' pages, sign-up and sign-in; public, with its own throttle.
  { name: 'console', path: '/console', ...CONSOLE_ROUTE },
  { name: 'console-pages', path: '/console/{proxy+}', ...CONSOLE_ROUTE },
  // Webhooks (docs/webhooks.md): endpoints of enabled agents and of users.
  {
    name: 'agent-webhooks-create',
    method: 'POST',
    path: '/api/v1/agents/webhooks',
    table: combine(AGENT, WEBHOOKS.create),
    webhookSecrets: true,
  },
  { name: 'agent-webhooks-list', method: 'GET', path: '/api/v1/agents/webhooks', table: combine(AGENT, WEBHOOKS.list) },
  { name: 'agent-webhooks-delete', method: 'DELETE', path: '/api/v1/agents/webhooks/{id}', table: combine(AGENT, WEBHOOKS.delete) },
  {
    name: 'agent-webhooks-deliveries',
    method: 'GET',
    path: '/api/v1/agents/webhooks/{id}/deliveries',
    table: combine(AGENT, WEBHOOKS.deliveries),
  },
  { name: 'agent-webhooks-test', method: 'POST', path: '/api/v1/agents/webhooks/{id}/test', table: combine(AGENT, WEBHOOKS.test) },
  {
    name: 'user-webhooks-create',
    method: 'POST',
    path: '/api/v1/users/me/webhooks',
    table: combine(USER, uses('createUserWebhook')),
    webhookSecrets: true,
  },
  { name: 'user-webhooks-list', method: 'GET', path: '/api/v1/users/me/webhooks', table: combine(USER, WEBHOOKS.list) },
  { name: 'user-webhooks-delete', method: 'DELETE', path: '/api/v1/users/me/webhooks/{id}', table: combine(USER, WEBHOOKS.delete) },
  {
    name: 'user-webhooks-deliveries',
    method: 'GET',
    path: '/api/v1/users/me/webhooks/{id}/deliveries',
    table: combine(USER, WEBHOOKS.deliveries),
  },
  { name: 'user-webhooks-test', method: 'POST', path: '/api/v1/users/me/webhooks/{id}/test', table: combine(USER, WEBHOOKS.test) },
  // x402 (docs/x402.md): the facilitator a seller's stock middleware calls at `<base>/x402`, with its agent key.
  { name: 'x402-verify', method: 'POST', path: '/x402/verify', table: X402_VERIFY, x402: 'read' },
  { name: 'x402-settle', method: 'POST', path: '/x402/settle', table: X402_SETTLE, x402: 'settle' },
  // Public: a stock client asks it before anything else (its Bearer header is ignored).
  { name: 'x402-supported', method: 'GET', path: '/x402/supported', public: true, table: {}, x402: 'read' },
  { name: 'agent-x402-settings', method: 'GET', path: '/api/v1/agents/x402', table: AGENT, x402: 'read', publicLinks: true },
  { name: 'agent-x402-payments', method: 'GET', path: '/api/v1/agents/x402/payments', table: uses('agentKeyLookup', 'listX402Payments') },
  // x402 purchases (DESIGN §22, docs/x402.md): an agent pays any x402 seller from its payer's USDC; create and read sign with the hot wallet.
  {
    name: 'agent-x402-purchase-create',
    method: 'POST',
    path: '/api/v1/agents/x402/purchases',
    table: PURCHASE,
    x402: 'settle',
    approvalSecret: true,
    publicLinks: true,
  },
  {
    name: 'agent-x402-purchases-list',
    method: 'GET',
    path: '/api/v1/agents/x402/purchases',
    table: uses('agentKeyLookup', 'listAgentPurchases'),
  },
  { name: 'agent-x402-purchase-get', method: 'GET', path: '/api/v1/agents/x402/purchases/{id}', table: READ_PURCHASE, x402: 'settle' },
  {
    name: 'agent-x402-purchase-receipt',
    method: 'POST',
    path: '/api/v1/agents/x402/purchases/{id}/receipt',
    table: uses('agentKeyLookup', 'getCharge', 'settlePurchase'),
    x402: 'read',
  },
  { name: 'health', method: 'GET', path: '/health', public: true, table: uses('pingTable') },
  // Serves docs/openapi.json as committed; touches nothing.
  { name: 'openapi', method: 'GET', path: '/api/v1/openapi.json', public: true, table: {} },
] as const satisfies readonly RouteSpec[];

type ToolRouteName = (typeof ROUTE_TABLE)[number]['name'];

/**
 * The MCP tools, in the order tools/list gives them, each with the route whose operation it is: the
 * stdio server sends it as that route's method and path, the remote server runs that route's use
 * case in-process, and so the MCP function needs what these routes need (`MCP_ROUTE`, computed).
 * Each has its implementation in functions/mcp/tools.ts, keyed by name: one missing fails to compile.
 */
export const MCP_TOOLS = [
  { name: 'create_charge', route: 'create-charge' },
  { name: 'get_charge', route: 'get-charge' },
  { name: 'list_charges', route: 'list-charges' },
  { name: 'get_balance', route: 'get-balance' },
  { name: 'capture_charge', route: 'capture-charge' },
  { name: 'release_charge', route: 'release-charge' },
  { name: 'refund_charge', route: 'refund-charge' },
  { name: 'withdraw', route: 'withdraw' },
  { name: 'list_withdrawals', route: 'list-withdrawals' },
  { name: 'request_grant', route: 'agent-create-grant-request' },
  { name: 'get_grant_request', route: 'agent-get-grant-request' },
  { name: 'x402_purchase', route: 'agent-x402-purchase-create' },
] as const satisfies readonly { name: string; route: ToolRouteName }[];

export type McpToolName = (typeof MCP_TOOLS)[number]['name'];

/** The tools' names in tools/list order (the OpenAPI document lists them from here). */
export const MCP_TOOL_NAMES: readonly McpToolName[] = MCP_TOOLS.map((tool) => tool.name);

/** What a function is given for what it does: its grants and the capabilities that bring it environment. */
type Needs = Pick<RouteSpec, 'table' | 'queue' | 'approvalSecret' | 'publicLinks' | 'webhookSecrets' | 'topups' | 'x402'>;

/**
 * What a function running all of `routes`' use cases needs: every grant and capability any of them
 * has. Not their credentials (admin, public, adminKeyAlternative and its operatorTable): the MCP
 * function authenticates agents only.
 */
function unionOfNeeds(routes: readonly RouteSpec[]): Needs {
  const any = (flag: 'queue' | 'approvalSecret' | 'publicLinks' | 'webhookSecrets') => routes.some((route) => route[flag] === true);
  const topups = [...new Set(routes.flatMap((route) => (route.topups ? [route.topups] : [])))];
  if (topups.length > 1) throw new Error(`one function cannot both open top-ups and take PayPal's webhook: ${topups.join(', ')}`);
  const x402 = routes.some((route) => route.x402 === 'settle')
    ? 'settle'
    : routes.some((route) => route.x402 === 'read')
      ? 'read'
      : undefined;
  return {
    table: combine(...routes.map((route) => route.table)),
    ...(any('queue') ? { queue: true } : {}),
    ...(any('approvalSecret') ? { approvalSecret: true } : {}),
    ...(any('publicLinks') ? { publicLinks: true } : {}),
    ...(any('webhookSecrets') ? { webhookSecrets: true } : {}),
    ...(topups[0] ? { topups: topups[0] } : {}),
    ...(x402 ? { x402 } : {}),
  };
}

const toolRoute = (name: ToolRouteName): RouteSpec => {
  const route: RouteSpec | undefined = ROUTE_TABLE.find((r) => r.name === name);
  if (!route) throw new Error(`no route ${name}`);
  return route;
};

/** The remote MCP server runs its tools' use cases in-process, so it needs what their routes need, and no more. */
const MCP_ROUTE = {
  name: 'mcp',
  method: 'POST',
  path: '/mcp',
  ...unionOfNeeds(MCP_TOOLS.map((tool) => toolRoute(tool.route))),
} as const satisfies RouteSpec;

const LAST_ROUTES = [
  // The transport's GET (a server-to-client stream): 405 `Allow: POST`, as it specifies for a server without one.
  { name: 'mcp-get', method: 'GET', path: '/mcp', public: true, table: {} },
  { name: 'not-found', method: 'ANY', path: '$default', public: true, table: {} },
] as const satisfies readonly RouteSpec[];

type RouteEntry = (typeof ROUTE_TABLE)[number] | typeof MCP_ROUTE | (typeof LAST_ROUTES)[number];

/** The name of a route of the registry: what every per-route table is keyed by. */
export type RouteName = RouteEntry['name'];

/** The routes whose path is `$default` (what no operation of the document describes). */
type DefaultRouteName = Extract<RouteEntry, { path: '$default' }>['name'];

/** The console's routes: pages for people, not operations of the document. */
type PageRouteName = Extract<RouteEntry, { pages: true }>['name'];

/** The routes the OpenAPI document describes: every one but the `$default` catch-all and the console's pages. */
export type DocumentedRouteName = Exclude<RouteName, DefaultRouteName | PageRouteName>;

/** A route as its function is deployed: the operator's read folded into its grant. */
const deployed = (route: RouteSpec<RouteName>): RouteSpec<RouteName> =>
  route.operatorTable ? { ...route, table: combine(route.table, route.operatorTable) } : route;

export const ROUTES: readonly RouteSpec<RouteName>[] = [...ROUTE_TABLE, MCP_ROUTE, ...LAST_ROUTES].map(deployed);

const BY_NAME = new Map<string, RouteSpec<RouteName>>(ROUTES.map((route) => [route.name, route]));

/** The route of this name (every RouteName has one). */
export function routeNamed(name: RouteName): RouteSpec<RouteName> {
  const route = BY_NAME.get(name);
  if (!route) throw new Error(`no route ${name}`);
  return route;
}

/**
 * What a route's function needs in its environment beyond the shared base, from its entry's
 * capabilities: the stack gives exactly these (lib/http-api.ts), and the handler refuses to start
 * without them and needs nothing more: its `loadConfig({ require: NEEDS.<route> })` reads them from
 * functions/registry/needs.generated.ts, which `npm run docs` writes from this (bin/registry/needs.ts).
 * Each need once, in the order a missing one is reported.
 */
export function configNeeds(route: RouteSpec): (cfg: Config) => readonly ConfigNeed[] {
  const listed: ConfigNeed[] = [
    ...(route.queue ? NEEDS_WITHDRAWALS : []),
    ...(route.x402 === 'read' ? NEEDS_X402 : []),
    ...(route.x402 === 'settle' ? NEEDS_X402_SETTLE : []),
    ...(route.approvalSecret ? NEEDS_APPROVAL_SECRET : []),
    ...(route.publicLinks ? NEEDS_PUBLIC_BASE_URL : []),
    ...(route.topups === 'open' ? [...NEEDS_USDC_TOPUPS, ...NEEDS_PAYPAL_ORDERS] : []),
    ...(route.topups === 'webhook' ? NEEDS_PAYPAL_WEBHOOK : []),
    ...(route.webhookSecrets ? NEEDS_WEBHOOK_SECRETS : []),
  ];
  const fixed = listed.filter((need, i) => listed.findIndex((other) => JSON.stringify(other) === JSON.stringify(need)) === i);
  return (cfg) => [...(recognisesAdmin(route) ? NEEDS_ADMIN_AUTH(cfg) : []), ...fixed];
}

/** Whether the route's function recognises the operator at all (it is given ADMIN_AUTH). */
export const recognisesAdmin = (route: RouteSpec): boolean => route.admin === true || route.adminKeyAlternative === true;

/** Whether the route's function reads the admin key secret under the stage's admin authorization. */
export const readsAdminKey = (route: RouteSpec, adminAuth: AdminAuth): boolean => adminAuth === 'key' && recognisesAdmin(route);

export const handlerEntry = (route: RouteSpec): string => `functions/api/${route.name}.handler.ts`;
