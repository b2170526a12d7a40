/**
 * Red team, issue 38 (DESIGN §24, docs/idempotency.md "Creations"): the creations that answer a
 * secret shown once replay it for the same Idempotency-Key and the same request. "The same
 * request" is what the body means, not how it is spelled: a retry by another JSON serializer (keys
 * in another order, whitespace, `5` for `5.00`, a name with the spaces the service trims) must get
 * the first answer back, byte for byte, and never `name taken` or a second grant. What means
 * something else (a name in another case, another limit) is 422 and carries no secret, whoever
 * sends it. Header names are case-insensitive (`Idempotency-Key`, `X-User-Key`).
 */
import { randomUUID } from 'node:crypto';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack();
auditAfterAll();

const SECRETS = /ag_live_|uk_live_|ug_live_|whsec_/;
const MISMATCH = [422, { error: 'idempotency key reused with different request' }];

describe('a creation replays for the same request in any spelling, and for nothing else', () => {
  it('registration: keys reordered, whitespace, a padded name → the first answer; a name in another case → 422 without the key', async () => {
    const idem = randomUUID();
    const name = `spelling-${process.pid}-${Date.now()}`;
    const first = await t.call<Record<string, unknown>>('POST', '/api/v1/agents/register', {
      headers: { 'idempotency-key': idem },
      raw: JSON.stringify({ name, email: 'dev@spelling.example', website: 'https://spelling.example' }),
    });
    expect(first.status).toBe(201);

    const respelled = await t.call('POST', '/api/v1/agents/register', {
      headers: { 'Idempotency-Key': idem },
      raw: `{\n  "website" : "https://spelling.example",\n  "email":"dev@spelling.example",  "name": "  ${name} "\n}`,
    });
    expect([respelled.status, respelled.text, respelled.headers.get('idempotent-replayed')]).toEqual([201, first.text, 'true']);

    const other = await t.call('POST', '/api/v1/agents/register', {
      headers: { 'idempotency-key': idem },
      raw: JSON.stringify({ name: name.toUpperCase(), email: 'dev@spelling.example', website: 'https://spelling.example' }),
    });
    expect([other.status, other.body]).toEqual(MISMATCH);
    expect(other.text).not.toMatch(SECRETS);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a grant: limits reordered and `5` for `5.00` → the first answer, one grant; another limit → 422 without the key', async () => {
    const agent = await t.enabledAgent();
    const payer = await t.fundedUser();
    const idem = randomUUID();
    const post = (raw: string, headers: Record<string, string> = {}) =>
      t.call<Record<string, unknown>>('POST', '/api/v1/users/me/grants', {
        headers: { 'x-user-key': payer.key, 'idempotency-key': idem, ...headers },
        raw,
      });
    const first = await post(`{"agentId":"${agent.id}","currency":"USD","limits":{"total":5.00,"perCharge":1}}`);
    expect(first.status).toBe(201);
    expect(String(first.body.key)).toMatch(/^ug_live_/);

    const respelled = await t.call('POST', '/api/v1/users/me/grants', {
      headers: { 'X-User-Key': payer.key, 'Idempotency-Key': idem },
      raw: ` { "limits" : { "perCharge": 1.00, "total": 5 }, "currency": "USD", "agentId": "${agent.id}" } `,
    });
    expect([respelled.status, respelled.text, respelled.headers.get('idempotent-replayed')]).toEqual([201, first.text, 'true']);

    const other = await post(`{"agentId":"${agent.id}","currency":"USD","limits":{"total":5.01,"perCharge":1}}`);
    expect([other.status, other.body]).toEqual(MISMATCH);
    expect(other.text).not.toMatch(SECRETS);

    const grants = await t.call<{ data: { id: string }[] }>('GET', '/api/v1/users/me/grants', { headers: { 'x-user-key': payer.key } });
    expect(grants.status).toBe(200);
    expect(grants.body.data.map((g) => g.id)).toEqual([first.body.id]);
  });
});
