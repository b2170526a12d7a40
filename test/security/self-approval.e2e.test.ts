/**
 * Issue 29, finding 1: an agent approves its own grant charge. The attacker holds an enabled agent
 * key and a grant key whose `approvalAbove` is 3; it charges 5.00 with the description
 * `{approvalToken}` (the placeholder the stored 202 kept for the link's token) and replays the
 * charge, over the API and over MCP, before and after the payer revokes the grant. Then it posts
 * every string any answer gave it to `/approve/…`.
 *
 * The property: nothing an agent writes is a template (its description comes back as it was
 * written), a replay is byte for byte the first answer, no answer to the agent approves a grant
 * charge, and a revoked grant's PENDING charge is approved by nobody, not even the payer (403
 * `grant revoked`, on the approval page and the user API), who can still decline it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TOKEN_PLACEHOLDER } from '../../functions/use-cases/charges/approval-token';
import { auditAfterAll } from '../support/audit';
import { afterCommand, inputText } from '../support/interleave';
import { useTestStack } from '../support/stack';
import { eventOf, type Receiver, startReceiver } from '../webhooks/receiver';

let userRx: Receiver;
const clients: Client[] = [];
// The MCP clients close while the stack still answers them: declared first, this runs before its stop.
afterAll(async () => {
  for (const client of clients) await client.close();
});
const t = useTestStack({}, { webhooks: { visibilityTimeoutSeconds: 2, pollIntervalMs: 50 } });
beforeAll(async () => {
  userRx = await startReceiver();
});
afterAll(async () => {
  await userRx?.stop();
});
auditAfterAll();

type Charge = { id: string; status: string; description: string; pendingReason: string | null; approvalUrl?: string | null };
let n = 0;
const idem = () => `self-approve-${Date.now()}-${++n}`;

/** A payer with 20 USD, an enabled agent and a grant to it that sends charges above 3 USD to the payer. */
async function grantAbove3() {
  const agent = await t.enabledAgent();
  const user = await t.fundedUser({ USD: 20 });
  const grant = await t.call<{ id: string; key: string }>('POST', '/api/v1/users/me/grants', {
    headers: { 'x-user-key': user.key },
    body: { agentId: agent.id, currency: 'USD', approvalAbove: 3 },
  });
  expect(grant.status).toBe(201);
  return { agent, user, grant: grant.body };
}

const charge = (agentKey: string, grantKey: string, key: string, body: Record<string, unknown>) =>
  t.call<Charge>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': grantKey, 'idempotency-key': key },
    body,
  });

const postForm = (url: string, action: 'approve' | 'decline') =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `action=${action}`,
    redirect: 'manual',
  });

/**
 * The attacker posts Approve to `/approve/<s>` for every string it was answered that mentions the
 * charge (the description, anything shaped like `<chargeId>.<mac>`), then the charge must still
 * wait for its payer.
 */
async function tryToApprove(agentKey: string, chargeId: string, answers: readonly string[]): Promise<void> {
  const candidates = new Set<string>();
  for (const text of answers) {
    for (const match of text.matchAll(new RegExp(`${chargeId}\\.[A-Za-z0-9_-]+`, 'g'))) candidates.add(match[0]);
    for (const match of text.matchAll(/\/approve\/([^"\s]+)/g)) if (match[1]) candidates.add(match[1]);
  }
  candidates.add(TOKEN_PLACEHOLDER);
  for (const token of candidates) await postForm(`${t.stack.url}/approve/${encodeURIComponent(token)}`, 'approve');
  const now = await t.call<Charge>('GET', `/api/v1/agents/charge/${chargeId}`, { headers: { 'x-agent-key': agentKey } });
  expect({ tried: [...candidates], status: now.body.status, pendingReason: now.body.pendingReason }).toEqual({
    tried: [...candidates],
    status: 'PENDING',
    pendingReason: 'user_approval',
  });
}

async function mcpClient(agentKey: string): Promise<Client> {
  const client = new Client({ name: 'attacker', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.stack.url}/mcp`), { requestInit: { headers: { 'x-agent-key': agentKey } } }),
  );
  clients.push(client);
  return client;
}
const mcpText = (result: CallToolResult) => (result.content[0]?.type === 'text' ? result.content[0].text : '');

describe('finding 1: an agent cannot approve its own grant charge', () => {
  it('over the API: the replay is the first answer byte for byte, the description stays text, and nothing the agent saw approves', async () => {
    const { agent, user, grant } = await grantAbove3();
    const hook = await t.call('POST', '/api/v1/users/me/webhooks', { headers: { 'x-user-key': user.key }, body: { url: userRx.url } });
    expect(hook.status).toBe(201);
    const key = idem();
    const body = { amount: 5, currency: 'USD', description: TOKEN_PLACEHOLDER };
    const first = await charge(agent.key, grant.key, key, body);
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({
      status: 'PENDING',
      pendingReason: 'user_approval',
      approvalUrl: null,
      description: TOKEN_PLACEHOLDER,
    });

    const replay = await charge(agent.key, grant.key, key, body);
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const read = await t.call('GET', `/api/v1/agents/charge/${first.body.id}`, { headers: { 'x-agent-key': agent.key } });
    const listed = await t.call('GET', '/api/v1/agents/charges', { headers: { 'x-agent-key': agent.key } });
    await tryToApprove(agent.key, first.body.id, [first.text, replay.text, read.text, listed.text]);
    expect(replay.text).toBe(first.text);

    // The payer's link is filled in by its field alone: the description the agent wrote goes out as it was written.
    const event = await userRx.waitFor(
      (r) => eventOf(r).type === 'charge.approval_requested' && eventOf(r).data.id === first.body.id,
      5_000,
    );
    const data = eventOf(event).data as { description: string; approvalUrl: string };
    expect(data.description).toBe(TOKEN_PLACEHOLDER);
    expect(data.approvalUrl).toMatch(new RegExp(`/approve/${first.body.id}\\.[A-Za-z0-9_-]{43}$`));

    // The payer's own link still works, once.
    expect((await postForm(data.approvalUrl, 'approve')).status).toBe(303);
    const after = await t.call<Charge>('GET', `/api/v1/agents/charge/${first.body.id}`, { headers: { 'x-agent-key': agent.key } });
    expect(after.body.status).toBe('SUCCESS');
  });

  it('the description is never a template, wherever the placeholder sits in it', async () => {
    const { agent, grant } = await grantAbove3();
    for (const description of [`pay ${TOKEN_PLACEHOLDER}`, `${TOKEN_PLACEHOLDER}${TOKEN_PLACEHOLDER}`, `/approve/${TOKEN_PLACEHOLDER}`]) {
      const key = idem();
      const body = { amount: 4, currency: 'USD', description };
      const first = await charge(agent.key, grant.key, key, body);
      expect(first.status).toBe(202);
      const replay = await charge(agent.key, grant.key, key, body);
      expect(replay.text).toBe(first.text);
      expect(replay.body.description).toBe(description);
      await tryToApprove(agent.key, first.body.id, [first.text, replay.text]);
    }
  });

  it('over MCP: create_charge replayed answers the same and approves nothing', async () => {
    const { agent, grant } = await grantAbove3();
    const client = await mcpClient(agent.key);
    const args = { amount: 5, currency: 'USD', description: TOKEN_PLACEHOLDER, user_key: grant.key, idempotency_key: idem() };
    const first = (await client.callTool({ name: 'create_charge', arguments: args })) as CallToolResult;
    expect(first.isError).toBeFalsy();
    const made = first.structuredContent as Charge;
    expect(made).toMatchObject({ status: 'PENDING', approvalUrl: null, description: TOKEN_PLACEHOLDER });
    const replay = (await client.callTool({ name: 'create_charge', arguments: args })) as CallToolResult;
    const got = (await client.callTool({ name: 'get_charge', arguments: { charge_id: made.id } })) as CallToolResult;
    await tryToApprove(agent.key, made.id, [mcpText(first), mcpText(replay), mcpText(got)]);
    expect(mcpText(replay)).toBe(mcpText(first));
    expect(replay.structuredContent).toEqual(first.structuredContent);
  });

  it('after the payer revokes the grant: the replay still approves nothing, and nobody approves its PENDING charges; the payer can decline', async () => {
    const { agent, user, grant } = await grantAbove3();
    const key = idem();
    const body = { amount: 5, currency: 'USD', description: TOKEN_PLACEHOLDER };
    const first = await charge(agent.key, grant.key, key, body);
    expect(first.status).toBe(202);
    // A hold awaiting approval too: approving it would let the agent capture.
    const heldKey = idem();
    const held = await charge(agent.key, grant.key, heldKey, { ...body, amount: 4, capture: false });
    expect(held.status).toBe(202);
    const link = async (id: string) => {
      const pending = await t.call<{ data: Charge[] }>('GET', '/api/v1/users/me/charges?status=PENDING', {
        headers: { 'x-user-key': user.key },
      });
      const url = pending.body.data.find((c) => c.id === id)?.approvalUrl;
      if (!url) throw new Error(`no approval link for ${id}`);
      return url;
    };
    const firstLink = await link(first.body.id);
    const heldLink = await link(held.body.id);

    const revoked = await t.call('DELETE', `/api/v1/users/me/grants/${grant.id}`, { headers: { 'x-user-key': user.key } });
    expect(revoked.status).toBe(200);

    const replay = await charge(agent.key, grant.key, key, body);
    const client = await mcpClient(agent.key);
    const overMcp = (await client.callTool({
      name: 'create_charge',
      arguments: { ...body, user_key: grant.key, idempotency_key: key },
    })) as CallToolResult;
    await tryToApprove(agent.key, first.body.id, [first.text, replay.text, mcpText(overMcp)]);
    expect(replay.text).toBe(first.text);
    expect(mcpText(overMcp)).toBe(first.text);

    // Not the payer either: the user API and the page both refuse, and say why.
    for (const id of [first.body.id, held.body.id]) {
      const api = await t.call('POST', `/api/v1/users/me/charges/${id}/approve`, { headers: { 'x-user-key': user.key } });
      expect([api.status, api.body]).toEqual([403, { error: 'grant revoked' }]);
    }
    const shown = await fetch(firstLink);
    const shownText = await shown.text();
    expect(shown.status).toBe(200);
    expect(shownText).toContain('revoked');
    expect(shownText).not.toMatch(/<button[^>]*value="approve"/);
    const page = await postForm(firstLink, 'approve');
    expect(page.status).toBe(403);
    expect(await page.text()).toContain('revoked');
    const heldPage = await postForm(heldLink, 'approve');
    expect(heldPage.status).toBe(403);

    for (const id of [first.body.id, held.body.id]) {
      const now = await t.call<Charge>('GET', `/api/v1/agents/charge/${id}`, { headers: { 'x-agent-key': agent.key } });
      expect([now.body.status, now.body.pendingReason]).toEqual(['PENDING', 'user_approval']);
    }
    const me = await t.call<{ balances: { USD: number }; held: { USD: number } }>('GET', '/api/v1/users/me', {
      headers: { 'x-user-key': user.key },
    });
    expect(me.body).toMatchObject({ balances: { USD: 11 }, held: { USD: 9 } });

    // The payer declines on the page and releases through the API: the holds come back.
    expect((await postForm(firstLink, 'decline')).status).toBe(303);
    const release = await t.call<Charge>('POST', `/api/v1/users/me/charges/${held.body.id}/release`, {
      headers: { 'x-user-key': user.key },
    });
    expect([release.status, release.body.status]).toEqual([200, 'FAILED']);
    const back = await t.call('GET', '/api/v1/users/me', { headers: { 'x-user-key': user.key } });
    expect(back.body).toMatchObject({ balances: { USD: 20 }, held: { USD: 0 } });
  });

  it('revoked between the approval reading the charge and its transaction: refused by the transaction itself', async () => {
    const { agent, user, grant } = await grantAbove3();
    const made = await charge(agent.key, grant.key, idem(), { amount: 5, currency: 'USD', description: 'race' });
    expect(made.status).toBe(202);
    const between = afterCommand({
      command: 'GetItemCommand',
      match: (input) => inputText(input).includes(`PENDINGCHARGE#${made.body.id}`),
      between: () => t.call('DELETE', `/api/v1/users/me/grants/${grant.id}`, { headers: { 'x-user-key': user.key } }),
    });
    const res = await t
      .call('POST', `/api/v1/users/me/charges/${made.body.id}/approve`, { headers: { 'x-user-key': user.key } })
      .finally(() => between.remove());
    expect(between.fired()).toBe(true);
    expect([res.status, res.body]).toEqual([403, { error: 'grant revoked' }]);
    const now = await t.call<Charge>('GET', `/api/v1/agents/charge/${made.body.id}`, { headers: { 'x-agent-key': agent.key } });
    expect(now.body.status).toBe('PENDING');
  });
});
