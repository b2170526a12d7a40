/**
 * The payer's statement shows one payer's money to that payer only (docs/statement.md): a payer's
 * page holds none of another's rows, whatever the filters; another payer's cursor (stolen or
 * guessed) reads only the caller's own partition, so the most it does is mislead the caller's own
 * `balanceAfter` figures (the cursor is not signed: it names a position and a running balance, never
 * a payer); and only the account key reads the statement: an agent's key or a grant key is 401.
 */
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack({}, { sweepIntervalMs: 0 });
auditAfterAll();

type Row = { id: string; reference: string; description: string; counterparty: { id: string } };
type Page = { data: Row[]; nextCursor: string | null; error?: string };
const statement = (key: string, query = '') =>
  t.call<Page>('GET', `/api/v1/users/me/statement${query}`, { headers: { 'x-user-key': key } });

let seq = 0;
async function payerWithCharges(label: string) {
  const user = await t.fundedUser({ USD: 50 });
  const agent = await t.enabledAgent();
  for (let i = 0; i < 3; i++) {
    const res = await t.call<{ id: string }>('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `iso-${process.pid}-${++seq}` },
      body: { amount: 1, currency: 'USD', description: `${label} secret ${i}` },
    });
    expect(res.status).toBe(201);
  }
  return { user, agent };
}

describe("another payer's statement", () => {
  it('is nowhere in mine, by any filter or any cursor of theirs', async () => {
    const mine = await payerWithCharges('mine');
    const theirs = await payerWithCharges('theirs');
    const theirPage = await statement(theirs.user.key, '?limit=1');
    const theirIds = new Set((await statement(theirs.user.key, '?limit=100')).body.data.map((r) => r.id));
    expect(theirIds.size).toBe(4);
    for (const query of ['', '?q=theirs', `?agentId=${theirs.agent.id}`, '?type=charge', `?cursor=${theirPage.body.nextCursor}`]) {
      const res = await statement(mine.user.key, query);
      expect(res.status).toBe(200);
      for (const row of res.body.data) {
        expect({ query, leaked: theirIds.has(row.id) || row.description.includes('theirs') }).toEqual({ query, leaked: false });
      }
    }
    // With their cursor, I read my own rows from their position on: mine only.
    const crossed = await statement(mine.user.key, `?cursor=${theirPage.body.nextCursor}&limit=1`);
    for (const row of crossed.body.data) expect(row.counterparty.id).toBe(mine.agent.id);
  });

  it('is 401 to an agent key and to a grant key: only the account key reads it', async () => {
    const { user, agent } = await payerWithCharges('keys');
    const grant = await t.call<{ key: string }>('POST', '/api/v1/users/me/grants', {
      headers: { 'x-user-key': user.key },
      body: { agentId: agent.id, currency: 'USD' },
    });
    expect(grant.status).toBe(201);
    expect((await statement(grant.body.key)).status).toBe(401);
    expect((await t.call('GET', '/api/v1/users/me/statement', { headers: { 'x-agent-key': agent.key } })).status).toBe(401);
    expect((await statement('uk_live_not-a-key')).status).toBe(401);
  });
});
