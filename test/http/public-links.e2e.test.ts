/**
 * Links the API hands out (the approval link of a 202 charge, over the API and over MCP) are built
 * from PUBLIC_BASE_URL, never from the request's Host header: a forged Host (or
 * x-forwarded-proto) must not point a payer's approval link at another site. Sent with node:http,
 * which lets a test set Host as a client on the network could.
 */
import { request } from 'node:http';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack();
auditAfterAll();

/** POSTs `body` to the local stack with exactly these headers (Host included). */
function post(path: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  const url = new URL(t.stack.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const FORGED = { host: 'pay.attacker.example', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'pay.attacker.example' };

async function payerNeedingApproval() {
  const user = await t.fundedUser({ USD: 50 });
  const policy = await t.call('PUT', '/api/v1/users/me/policy', {
    headers: { 'x-user-key': user.key },
    body: { approvalAbove: { USD: 10 } },
  });
  expect(policy.status).toBe(200);
  return user;
}

it('builds the approval link of a 202 charge from PUBLIC_BASE_URL, whatever the Host header says', async () => {
  const agent = await t.enabledAgent();
  const user = await payerNeedingApproval();
  const res = await post(
    '/api/v1/agents/charges',
    { ...FORGED, 'content-type': 'application/json', 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': 'forged-host' },
    '{"amount":15,"currency":"USD"}',
  );
  expect(res.status).toBe(202);
  const { id, approvalUrl } = JSON.parse(res.text) as { id: string; approvalUrl: string };
  expect(approvalUrl.startsWith(`${t.stack.url}/approve/${id}.`)).toBe(true);
  expect(res.text).not.toContain('attacker');
});

it('builds the approval link of an MCP create_charge from PUBLIC_BASE_URL too', async () => {
  const agent = await t.enabledAgent();
  const user = await payerNeedingApproval();
  const message = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'create_charge',
      arguments: { amount: 15, currency: 'USD', user_key: user.key, idempotency_key: 'forged-host-mcp' },
    },
  };
  const res = await post(
    '/mcp',
    { ...FORGED, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-agent-key': agent.key },
    JSON.stringify(message),
  );
  expect(res.status).toBe(200);
  const charge = (JSON.parse(res.text) as { result: { structuredContent: { id: string; approvalUrl: string } } }).result.structuredContent;
  expect(charge.approvalUrl.startsWith(`${t.stack.url}/approve/${charge.id}.`)).toBe(true);
  expect(res.text).not.toContain('attacker');
});
