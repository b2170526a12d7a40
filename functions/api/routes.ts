/**
 * Every HTTP route as data. The local adapter (bin/local) serves these, and the CDK stack gives
 * each its own Lambda with exactly the grants listed here. A handler module exports `handler`.
 */
export type TableAccess = 'read' | 'write';

export interface RouteSpec {
  /** Function name stem and handler file: functions/api/<name>.handler.ts. */
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'ANY';
  /** API Gateway route path, `{param}` style; `$default` catches everything unmatched. */
  path: string;
  table: readonly TableAccess[];
  /** Sends withdrawals to the payout queue. */
  queue?: boolean;
  /** Reads the admin key secret. */
  adminSecret?: boolean;
  /** Seals webhook signing secrets (KMS Encrypt on AWS). */
  webhookSecrets?: boolean;
  /** Makes or checks approval links: reads the approval secret. */
  approvalSecret?: boolean;
  /** Hands out links to the API (approval links): gets PUBLIC_BASE_URL, which it requires; links are never built from Host. */
  publicLinks?: boolean;
  /** Top-ups (docs/topups.md): `open` creates PayPal orders and hands out the deposit wallet;
   * `webhook` verifies PayPal's webhooks and captures orders. Both get PayPal's settings. */
  topups?: 'open' | 'webhook';
}

export const ROUTES: readonly RouteSpec[] = [
  { name: 'register-agent', method: 'POST', path: '/api/v1/agents/register', table: ['write'] },
  {
    name: 'create-charge',
    method: 'POST',
    path: '/api/v1/agents/charges',
    table: ['read', 'write'],
    approvalSecret: true,
    publicLinks: true,
  },
  { name: 'list-charges', method: 'GET', path: '/api/v1/agents/charges', table: ['read'] },
  { name: 'get-charge', method: 'GET', path: '/api/v1/agents/charge/{id}', table: ['read'], adminSecret: true },
  { name: 'get-balance', method: 'GET', path: '/api/v1/agents/balance', table: ['read'] },
  { name: 'withdraw', method: 'POST', path: '/api/v1/agents/withdraw', table: ['read', 'write'], queue: true },
  { name: 'list-withdrawals', method: 'GET', path: '/api/v1/agents/withdraw', table: ['read'] },
  // The charge lifecycle (docs/design.md §12, docs/lifecycle.md).
  { name: 'capture-charge', method: 'POST', path: '/api/v1/agents/charge/{id}/capture', table: ['read', 'write'] },
  { name: 'release-charge', method: 'POST', path: '/api/v1/agents/charge/{id}/release', table: ['read', 'write'] },
  { name: 'refund-charge', method: 'POST', path: '/api/v1/agents/charge/{id}/refund', table: ['read', 'write'] },
  { name: 'rotate-agent-key', method: 'POST', path: '/api/v1/agents/keys/rotate', table: ['read', 'write'] },
  { name: 'admin-create-user', method: 'POST', path: '/api/v1/admin/users', table: ['write'], adminSecret: true },
  { name: 'admin-credit-user', method: 'POST', path: '/api/v1/admin/users/{id}/credits', table: ['read', 'write'], adminSecret: true },
  { name: 'admin-get-user', method: 'GET', path: '/api/v1/admin/users/{id}', table: ['read'], adminSecret: true },
  { name: 'admin-update-agent', method: 'PATCH', path: '/api/v1/admin/agents/{id}', table: ['read', 'write'], adminSecret: true },
  { name: 'user-me', method: 'GET', path: '/api/v1/users/me', table: ['read'] },
  { name: 'user-list-charges', method: 'GET', path: '/api/v1/users/me/charges', table: ['read'] },
  { name: 'user-get-policy', method: 'GET', path: '/api/v1/users/me/policy', table: ['read'] },
  { name: 'user-put-policy', method: 'PUT', path: '/api/v1/users/me/policy', table: ['read', 'write'] },
  { name: 'user-approve-charge', method: 'POST', path: '/api/v1/users/me/charges/{id}/approve', table: ['read', 'write'] },
  { name: 'user-decline-charge', method: 'POST', path: '/api/v1/users/me/charges/{id}/decline', table: ['read', 'write'] },
  { name: 'user-rotate-key', method: 'POST', path: '/api/v1/users/me/keys/rotate', table: ['read', 'write'] },
  // Top-ups (docs/topups.md): money in by Solana Pay (USDC) or PayPal checkout (USD).
  { name: 'user-create-topup', method: 'POST', path: '/api/v1/users/me/topups', table: ['read', 'write'], topups: 'open' },
  { name: 'user-list-topups', method: 'GET', path: '/api/v1/users/me/topups', table: ['read'] },
  { name: 'user-get-topup', method: 'GET', path: '/api/v1/users/me/topups/{id}', table: ['read'] },
  // Public: PayPal's verify-webhook-signature call is what authenticates it.
  { name: 'paypal-webhook', method: 'POST', path: '/api/v1/paypal/webhooks', table: ['read', 'write'], topups: 'webhook' },
  // The approval page (HTML, docs/approvals.md): the link's token is its only credential.
  { name: 'approval-page', method: 'GET', path: '/approve/{token}', table: ['read'], approvalSecret: true },
  { name: 'approval-decide', method: 'POST', path: '/approve/{token}', table: ['read', 'write'], approvalSecret: true },
  // Webhooks (docs/webhooks.md): endpoints of enabled agents and of users.
  { name: 'agent-webhooks-create', method: 'POST', path: '/api/v1/agents/webhooks', table: ['read', 'write'], webhookSecrets: true },
  { name: 'agent-webhooks-list', method: 'GET', path: '/api/v1/agents/webhooks', table: ['read'] },
  { name: 'agent-webhooks-delete', method: 'DELETE', path: '/api/v1/agents/webhooks/{id}', table: ['read', 'write'] },
  { name: 'agent-webhooks-deliveries', method: 'GET', path: '/api/v1/agents/webhooks/{id}/deliveries', table: ['read'] },
  { name: 'agent-webhooks-test', method: 'POST', path: '/api/v1/agents/webhooks/{id}/test', table: ['read', 'write'] },
  { name: 'user-webhooks-create', method: 'POST', path: '/api/v1/users/me/webhooks', table: ['read', 'write'], webhookSecrets: true },
  { name: 'user-webhooks-list', method: 'GET', path: '/api/v1/users/me/webhooks', table: ['read'] },
  { name: 'user-webhooks-delete', method: 'DELETE', path: '/api/v1/users/me/webhooks/{id}', table: ['read', 'write'] },
  { name: 'user-webhooks-deliveries', method: 'GET', path: '/api/v1/users/me/webhooks/{id}/deliveries', table: ['read'] },
  { name: 'user-webhooks-test', method: 'POST', path: '/api/v1/users/me/webhooks/{id}/test', table: ['read', 'write'] },
  { name: 'health', method: 'GET', path: '/health', table: ['read'] },
  // Serves docs/openapi.json as committed; touches nothing.
  { name: 'openapi', method: 'GET', path: '/api/v1/openapi.json', table: [] },
  // The remote MCP server runs the agent use cases in-process, so it needs what each of them needs.
  { name: 'mcp', method: 'POST', path: '/mcp', table: ['read', 'write'], queue: true, approvalSecret: true, publicLinks: true },
  { name: 'not-found', method: 'ANY', path: '$default', table: [] },
];

export const handlerEntry = (route: RouteSpec): string => `functions/api/${route.name}.handler.ts`;
