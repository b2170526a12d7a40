/**
 * Every answer of the local stack names its request (x-request-id): a fresh id per request, as the
 * local adapter gives each event its own requestContext.requestId (API Gateway's on AWS), on
 * successes, refusals, the catch-all 404 and the HTML pages alike.
 */
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack();
auditAfterAll();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('x-request-id', () => {
  it('is on every answer, a different one for each request', async () => {
    const replies = [
      await t.call('GET', '/health'),
      await t.call('GET', '/health'),
      await t.call('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': 'ag_live_unknown' } }),
      await t.call('GET', '/nowhere'),
      await t.call('POST', '/api/v1/agents/register', { body: { name: '' } }),
      await t.call('GET', '/approve/not-a-token'),
    ];
    expect(replies.map((r) => r.status)).toEqual([200, 200, 401, 404, 400, 404]);
    const ids = replies.map((r) => r.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
