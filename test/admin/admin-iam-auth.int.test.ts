/**
 * The admin routes' handlers under ADMIN_AUTH=iam (what the stack sets when the stage authorizes
 * them with IAM): API Gateway's verdict, `requestContext.authorizer.iam`, is the credential; a
 * request without it is refused with the admin message, and x-admin-key counts for nothing. The
 * handlers are called with the v2 events API Gateway would send, against DynamoDB Local.
 */
// First: the operator's charge and payout routes make receipt links, so their handlers need the address at init.
import '../support/public-base-url-env';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { handler as cancelPayout } from '../../functions/api/admin-cancel-payout.handler';
import { handler as createUser } from '../../functions/api/admin-create-user.handler';
import { handler as creditUser } from '../../functions/api/admin-credit-user.handler';
import { handler as getAgent } from '../../functions/api/admin-get-agent.handler';
import { handler as getAdminCharge } from '../../functions/api/admin-get-charge.handler';
import { handler as getUser } from '../../functions/api/admin-get-user.handler';
import { handler as listAgentCharges } from '../../functions/api/admin-list-agent-charges.handler';
import { handler as listAgents } from '../../functions/api/admin-list-agents.handler';
import { handler as listPayouts } from '../../functions/api/admin-list-payouts.handler';
import { handler as refundCharge } from '../../functions/api/admin-refund-charge.handler';
import { handler as releasePayout } from '../../functions/api/admin-release-payout.handler';
import { handler as rotateUserKey } from '../../functions/api/admin-rotate-user-key.handler';
import { handler as updateAgent } from '../../functions/api/admin-update-agent.handler';
import { handler as getCharge } from '../../functions/api/get-charge.handler';
import { ROUTES } from '../../functions/api/routes';
import { config, resetForTests } from '../../functions/config';
import type { RouteHandler } from '../../functions/http/handler';
import { registerAgent } from '../support/answers';
import { createTestTable } from '../support/table';

/** What API Gateway puts in `requestContext.authorizer` after an IAM-authorized request. */
const IAM_VERDICT = {
  iam: {
    accessKey: 'ASIAEXAMPLEEXAMPLE00',
    accountId: '123456789012',
    callerId: 'AROAEXAMPLEEXAMPLE000:operator',
    cognitoIdentity: null,
    principalOrgId: null,
    userArn: 'arn:aws:sts::123456789012:assumed-role/payments-operator/operator',
    userId: 'AROAEXAMPLEEXAMPLE000:operator',
  },
};

interface Call {
  method: string;
  path: string;
  params?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
  iam?: boolean;
}

function event({ method, path, params, headers = {}, body, iam }: Call): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: `${method} ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(params ? { pathParameters: params } : {}),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    isBase64Encoded: false,
    requestContext: {
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' },
      requestId: `req-${Math.random()}`,
      ...(iam ? { authorizer: IAM_VERDICT } : {}),
    },
  } as unknown as APIGatewayProxyEventV2;
}

async function call(handler: RouteHandler, request: Call): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = (await handler(event(request))) as APIGatewayProxyStructuredResultV2;
  return { status: res.statusCode ?? 0, body: JSON.parse(res.body ?? '{}') as Record<string, unknown> };
}

const RIGHT_KEY = { 'x-admin-key': 'test-admin-key-0123456789' };
const NO_SUCH_USER = 'u01aaaaaaaaaaaaaaaaaaaaaaaa';
const NO_SUCH_AGENT = 'a01aaaaaaaaaaaaaaaaaaaaaaaa';
const NO_SUCH_CHARGE = 'c01aaaaaaaaaaaaaaaaaaaaaaaa';
const NO_SUCH_PAYOUT = 'p01aaaaaaaaaaaaaaaaaaaaaaaa';
const payoutPath = (action: string) => `/api/v1/admin/agents/${NO_SUCH_AGENT}/payouts/${NO_SUCH_PAYOUT}/${action}`;

/** Every admin route with a request it would accept (ids unknown: an authorized request gets 404, not 401). */
const ADMIN_CALLS: [string, RouteHandler, Call][] = [
  ['admin-create-user', createUser, { method: 'POST', path: '/api/v1/admin/users' }],
  [
    'admin-credit-user',
    creditUser,
    {
      method: 'POST',
      path: `/api/v1/admin/users/${NO_SUCH_USER}/credits`,
      params: { id: NO_SUCH_USER },
      headers: { 'idempotency-key': 'iam-test' },
      body: { amount: 1, currency: 'USD' },
    },
  ],
  ['admin-get-user', getUser, { method: 'GET', path: `/api/v1/admin/users/${NO_SUCH_USER}`, params: { id: NO_SUCH_USER } }],
  [
    'admin-rotate-user-key',
    rotateUserKey,
    { method: 'POST', path: `/api/v1/admin/users/${NO_SUCH_USER}/keys/rotate`, params: { id: NO_SUCH_USER } },
  ],
  [
    'admin-update-agent',
    updateAgent,
    { method: 'PATCH', path: `/api/v1/admin/agents/${NO_SUCH_AGENT}`, params: { id: NO_SUCH_AGENT }, body: { enabled: true } },
  ],
  ['admin-list-agents', listAgents, { method: 'GET', path: '/api/v1/admin/agents' }],
  ['admin-get-agent', getAgent, { method: 'GET', path: `/api/v1/admin/agents/${NO_SUCH_AGENT}`, params: { id: NO_SUCH_AGENT } }],
  ['admin-get-charge', getAdminCharge, { method: 'GET', path: `/api/v1/admin/charges/${NO_SUCH_CHARGE}`, params: { id: NO_SUCH_CHARGE } }],
  // A disabled agent's money (docs/payouts.md "Held payouts", docs/lifecycle.md).
  ['admin-list-payouts', listPayouts, { method: 'GET', path: '/api/v1/admin/payouts' }],
  [
    'admin-release-payout',
    releasePayout,
    { method: 'POST', path: payoutPath('release'), params: { id: NO_SUCH_AGENT, payoutId: NO_SUCH_PAYOUT } },
  ],
  [
    'admin-cancel-payout',
    cancelPayout,
    {
      method: 'POST',
      path: payoutPath('cancel'),
      params: { id: NO_SUCH_AGENT, payoutId: NO_SUCH_PAYOUT },
      headers: { 'idempotency-key': 'iam-test' },
    },
  ],
  [
    'admin-list-agent-charges',
    listAgentCharges,
    { method: 'GET', path: `/api/v1/admin/agents/${NO_SUCH_AGENT}/charges`, params: { id: NO_SUCH_AGENT } },
  ],
  [
    'admin-refund-charge',
    refundCharge,
    {
      method: 'POST',
      path: `/api/v1/admin/agents/${NO_SUCH_AGENT}/charges/${NO_SUCH_CHARGE}/refund`,
      params: { id: NO_SUCH_AGENT, chargeId: NO_SUCH_CHARGE },
      headers: { 'idempotency-key': 'iam-test' },
      body: {},
    },
  ],
];

/** What an ADMIN_CALLS request answers once past authentication: created, listed, or the unknown id's 404. */
const passedStatus = (name: string): number =>
  ({ 'admin-create-user': 201, 'admin-list-agents': 200, 'admin-list-payouts': 200 })[name] ?? 404;

const saved = { ...process.env };
const useAdminAuth = (mode: 'iam' | 'key') => {
  process.env.ADMIN_AUTH = mode;
  resetForTests();
};

beforeAll(async () => {
  await createTestTable();
});
afterAll(() => {
  process.env = saved;
  resetForTests();
});

it('covers every admin route of ROUTES', () => {
  expect(ADMIN_CALLS.map(([name]) => name).sort()).toEqual(
    ROUTES.filter((r) => r.admin)
      .map((r) => r.name)
      .sort(),
  );
});

describe('under ADMIN_AUTH=iam', () => {
  beforeEach(() => useAdminAuth('iam'));

  it.each(
    ADMIN_CALLS,
  )('%s refuses a request API Gateway did not authorize, even with the right x-admin-key', async (_, handler, request) => {
    for (const headers of [{}, RIGHT_KEY]) {
      const res = await call(handler, { ...request, headers: { ...request.headers, ...headers } });
      expect(res).toEqual({ status: 401, body: { error: 'invalid admin key' } });
    }
  });

  it.each(
    ADMIN_CALLS,
  )('%s accepts a request carrying the IAM verdict, with no x-admin-key or a wrong one', async (name, handler, request) => {
    for (const headers of [{}, { 'x-admin-key': 'wrong-key-but-long-enough' }] as Record<string, string>[]) {
      const res = await call(handler, { ...request, headers: { ...request.headers, ...headers }, iam: true });
      expect([name, res.status]).toEqual([name, passedStatus(name)]);
    }
  });

  it('runs the operator flow: create, credit, read, enable and read the agent, read any charge', async () => {
    const created = await call(createUser, { method: 'POST', path: '/api/v1/admin/users', iam: true });
    expect(created.status).toBe(201);
    const userId = String(created.body.id);
    const credited = await call(creditUser, {
      method: 'POST',
      path: `/api/v1/admin/users/${userId}/credits`,
      params: { id: userId },
      headers: { 'idempotency-key': 'iam-flow' },
      body: { amount: 5, currency: 'USD' },
      iam: true,
    });
    expect(credited).toEqual({ status: 200, body: { id: userId, balances: { USD: 5, USDC: 0 } } });
    expect(await call(getUser, { method: 'GET', path: `/api/v1/admin/users/${userId}`, params: { id: userId }, iam: true })).toEqual(
      credited,
    );

    const registered = (await registerAgent({ name: `iam-agent-${Date.now()}`, email: 'a@example.com', website: 'https://a.example.com' }))
      .body as { agentId: string };
    const agentPath = `/api/v1/admin/agents/${registered.agentId}`;
    const params = { id: registered.agentId };
    const enabled = await call(updateAgent, { method: 'PATCH', path: agentPath, params, body: { enabled: true }, iam: true });
    expect(enabled).toMatchObject({ status: 200, body: { id: registered.agentId, enabled: true } });
    expect(await call(getAgent, { method: 'GET', path: agentPath, params, iam: true })).toMatchObject({
      status: 200,
      body: { id: registered.agentId, enabled: true, balances: { USD: 0, USDC: 0 } },
    });
  });

  it('get-charge: x-admin-key is no credential there (401 as without a key); the agent path is unchanged', async () => {
    const request = { method: 'GET', path: `/api/v1/agents/charge/${NO_SUCH_CHARGE}`, params: { id: NO_SUCH_CHARGE } };
    const noKey = { status: 401, body: { error: 'missing x-agent-key header' } };
    expect(await call(getCharge, { ...request, headers: RIGHT_KEY })).toEqual(noKey);
    expect(await call(getCharge, request)).toEqual(noKey);
    expect(await call(getCharge, { ...request, headers: { 'x-agent-key': 'ag_live_nope' } })).toEqual({
      status: 401,
      body: { error: 'invalid agent key' },
    });
  });

  it('needs no admin key to run', async () => {
    delete process.env.ADMIN_KEY;
    resetForTests();
    expect(config().ADMIN_KEY).toBeUndefined();
    expect((await call(createUser, { method: 'POST', path: '/api/v1/admin/users', iam: true })).status).toBe(201);
  });
});

describe('under ADMIN_AUTH=key (npm start, tests, a stage with adminAuth key)', () => {
  beforeEach(() => {
    process.env.ADMIN_KEY = saved.ADMIN_KEY;
    useAdminAuth('key');
  });

  it.each(ADMIN_CALLS)('%s wants x-admin-key: an IAM verdict alone is refused, the right key accepted', async (name, handler, request) => {
    // No x-admin-key at all: the header is named.
    expect(await call(handler, { ...request, iam: true })).toEqual({ status: 401, body: { error: 'missing x-admin-key header' } });
    const res = await call(handler, { ...request, headers: { ...request.headers, ...RIGHT_KEY } });
    expect([name, res.status]).toEqual([name, passedStatus(name)]);
  });

  it('get-charge still lets the admin key read any charge', async () => {
    const request = { method: 'GET', path: `/api/v1/agents/charge/${NO_SUCH_CHARGE}`, params: { id: NO_SUCH_CHARGE } };
    expect(await call(getCharge, { ...request, headers: RIGHT_KEY })).toEqual({ status: 404, body: { error: 'charge not found' } });
    expect(await call(getCharge, { ...request, headers: { 'x-admin-key': 'wrong-key-but-long-enough' } })).toEqual({
      status: 401,
      body: { error: 'invalid admin key' },
    });
  });
});
