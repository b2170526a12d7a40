/**
 * `npm run admin -- --api` signing with SigV4, end to end on the IAM path: the CLI takes
 * credentials from the standard chain (here the environment), signs; a stand-in for API Gateway's
 * IAM authorization recomputes each signature with the known test secret (test/support/sigv4-verify.ts,
 * no AWS library) and, as API Gateway does, answers 403 `{"message":"Forbidden"}` itself or invokes
 * the route's real handler with `requestContext.authorizer.iam`; the handlers run under
 * ADMIN_AUTH=iam against DynamoDB Local.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createRouteHandler, type LoadedRoute } from '../../bin/local/http-adapter';
import { type LocalServer, startLocalServer } from '../../bin/local/local-server';
import { runAdmin } from '../../bin/operator/admin-cli';
import { handlerEntry, ROUTES } from '../../functions/api/routes';
import { resetForTests } from '../../functions/config';
import type { RouteHandler } from '../../functions/http/handler';
import { registerAgent } from '../support/answers';
import { verifySigV4 } from '../support/sigv4-verify';
import { createTestTable } from '../support/table';

const OPERATOR = {
  accessKeyId: 'AKIAOPERATOROPERATOR',
  secretAccessKey: 'operator/secret/for/tests/only/0123456789ab',
  sessionToken: 'op-session',
};
const REGION = 'eu-west-1';

/** What reached the stand-in, per request: the verdict and the body as signed. */
const seen: { path: string; ok: boolean; reason?: string; body: string; signedHeaders?: string[] }[] = [];

/** API Gateway's IAM authorization in front of one route: verify, then invoke with the verdict, or refuse. */
function iamAuthorized(handler: RouteHandler): RouteHandler {
  return async (event: APIGatewayProxyEventV2) => {
    const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    const verdict = verifySigV4(
      { method: event.requestContext.http.method, path: event.rawPath, query: event.rawQueryString, headers, body: event.body ?? '' },
      { [OPERATOR.accessKeyId]: OPERATOR.secretAccessKey },
      { region: REGION, service: 'execute-api' },
    );
    seen.push({
      path: event.rawPath,
      ok: verdict.ok,
      body: event.body ?? '',
      ...(verdict.reason ? { reason: verdict.reason } : {}),
      ...(verdict.signedHeaders ? { signedHeaders: verdict.signedHeaders } : {}),
    });
    if (!verdict.ok) return { statusCode: 403, headers: { 'content-type': 'application/json' }, body: '{"message":"Forbidden"}' };
    const iam = {
      accessKey: OPERATOR.accessKeyId,
      accountId: '123456789012',
      callerId: 'AROAOPERATOR:cli',
      cognitoIdentity: null,
      principalOrgId: null,
      userArn: 'arn:aws:sts::123456789012:assumed-role/payments-operator/cli',
      userId: 'AROAOPERATOR:cli',
    };
    return handler({ ...event, requestContext: { ...event.requestContext, authorizer: { iam } } } as APIGatewayProxyEventV2);
  };
}

let server: LocalServer;
const saved = { ...process.env };

beforeAll(async () => {
  await createTestTable();
  // The functions as the stack configures them under adminAuth iam: no admin key at all; the
  // public address the charge and payout routes' receipt links are made on (never fetched here).
  Object.assign(process.env, { ADMIN_AUTH: 'iam', PUBLIC_BASE_URL: 'https://pay.test.example.com' });
  delete process.env.ADMIN_KEY;
  resetForTests();
  const routes: LoadedRoute[] = [];
  for (const spec of ROUTES.filter((r) => r.admin || r.path === '$default')) {
    const mod = (await import(`../../${handlerEntry(spec).replace(/\.ts$/, '')}`)) as { handler: RouteHandler };
    routes.push({ spec, handler: spec.admin ? iamAuthorized(mod.handler) : mod.handler });
  }
  server = await startLocalServer(createRouteHandler(routes));
});

afterAll(async () => {
  await server?.stop();
  process.env = saved;
  resetForTests();
});

/** Runs the CLI in API mode with `env` as the operator's shell (the credential chain reads process.env). */
async function admin(credentials: Record<string, string>, ...argv: string[]) {
  const before = { ...process.env };
  Object.assign(process.env, credentials);
  const out: string[] = [];
  const err: string[] = [];
  try {
    const env = { ...process.env };
    delete env.ADMIN_KEY;
    const code = await runAdmin(
      ['--api', server.url, '--region', REGION, ...argv],
      { out: (t) => out.push(t), err: (t) => err.push(t) },
      env,
    );
    const stdout = out.join('\n');
    return { code, stdout, stderr: err.join('\n'), json: stdout ? (JSON.parse(stdout) as Record<string, unknown>) : undefined };
  } finally {
    process.env = before;
  }
}

const operator = {
  AWS_ACCESS_KEY_ID: OPERATOR.accessKeyId,
  AWS_SECRET_ACCESS_KEY: OPERATOR.secretAccessKey,
  AWS_SESSION_TOKEN: OPERATOR.sessionToken,
};

describe('npm run admin -- --api, signed', () => {
  it('creates, credits and shows a user, enables and shows an agent, all signed and verified', async () => {
    const created = await admin(operator, 'create-user');
    expect(created).toMatchObject({
      code: 0,
      stderr: '',
      json: { id: expect.stringMatching(/^u/), userKey: expect.stringMatching(/^uk_live_/) },
    });
    const userId = String(created.json?.id);

    const credited = await admin(operator, 'credit', userId, '25.50', 'USD', '--idempotency-key', 'signed-1');
    expect(credited).toMatchObject({ code: 0, stderr: '', json: { id: userId, balances: { USD: 25.5, USDC: 0 } } });
    // The amount travelled as the literal typed, and the idempotency key and the session token were signed.
    const credit = seen.find((s) => s.path.endsWith('/credits'));
    expect(credit).toMatchObject({ ok: true, body: '{"amount":25.50,"currency":"USD"}' });
    expect(credit?.signedHeaders).toEqual(
      expect.arrayContaining(['host', 'idempotency-key', 'x-amz-date', 'x-amz-security-token', 'content-type']),
    );
    expect((await admin(operator, 'credit', userId, '25.50', 'USD', '--idempotency-key', 'signed-1')).json).toMatchObject({
      balances: { USD: 25.5 },
    });
    expect((await admin(operator, 'show-user', userId)).stdout).toContain('"USD": 25.5');

    const agent = (await registerAgent({ name: `signed-${Date.now()}`, email: 'a@example.com', website: 'https://a.example.com' }))
      .body as {
      agentId: string;
    };
    expect(await admin(operator, 'enable-agent', agent.agentId)).toMatchObject({ code: 0, json: { id: agent.agentId, enabled: true } });
    expect(await admin(operator, 'show-agent', agent.agentId)).toMatchObject({
      code: 0,
      json: { id: agent.agentId, enabled: true, balances: { USD: 0, USDC: 0 } },
    });
    // A list with a query string: the query is signed too (the stand-in verifies it).
    const waiting = (
      await registerAgent({ name: `signed-waiting-${Date.now()}`, email: 'a@example.com', website: 'https://a.example.com' })
    ).body as { agentId: string };
    const pending = await admin(operator, 'list-agents', '--pending', '--limit', '100');
    expect(pending).toMatchObject({ code: 0, stderr: '' });
    const listed = (pending.json as { data: { id: string; enabled: boolean }[] }).data;
    expect(listed).toContainEqual(expect.objectContaining({ id: waiting.agentId, enabled: false }));
    expect(listed.map((a) => a.id)).not.toContain(agent.agentId);
    expect(seen[seen.length - 1]).toMatchObject({ path: '/api/v1/admin/agents', ok: true });
    expect(await admin(operator, 'show-charge', 'c01aaaaaaaaaaaaaaaaaaaaaaaa')).toMatchObject({
      code: 1,
      stderr: 'error: charge not found',
    });
    expect(seen.every((s) => s.ok)).toBe(true);
  });

  it("is refused by the gateway, not the service, when the signature is not the operator's: exit 1 with a hint", async () => {
    const before = seen.length;
    const wrong = await admin({ ...operator, AWS_SECRET_ACCESS_KEY: 'not-the-operators-secret-0123456789abcdefgh' }, 'create-user');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^error: HTTP 403: Forbidden \(API Gateway refused the request .*execute-api:Invoke.*AdminApiPolicyArn/);
    expect(seen.slice(before)).toEqual([expect.objectContaining({ ok: false, reason: 'signature does not match' })]);
  });

  it('sends no signature, and gets 403, when --admin-key is given instead (the key opens nothing under IAM)', async () => {
    const before = seen.length;
    const keyed = await admin(operator, 'create-user', '--admin-key', 'test-admin-key-0123456789');
    expect(keyed.code).toBe(1);
    expect(keyed.stderr).toContain('HTTP 403: Forbidden');
    expect(seen.slice(before)).toEqual([expect.objectContaining({ ok: false, reason: 'no SigV4 Authorization header' })]);
  });
});
