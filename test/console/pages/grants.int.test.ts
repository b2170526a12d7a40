/**
 * Grants (DESIGN §16, §21) against DynamoDB Local: the form's exact labels, a grant key shown once
 * in the submit's own answer (never in a redirect), one grant per double submit, refusals that
 * change nothing, revoke, and another payer's grant refused.
 */
import { hashKey } from '../../../functions/core/keys';
import { lookupCredentials } from '../../../functions/store/identity/credentials.repository';
import { listMyGrants } from '../../../functions/use-cases/identity/grants';
import { createCharge } from '../../support/answers';
import {
  bodyOf,
  charge,
  consolePagesEnv,
  credit,
  expectCsrfInEveryPostForm,
  get,
  newAgent,
  newPayer,
  onceKeyOf,
  type Payer,
  post,
  statusOf,
} from './support';

consolePagesEnv();

const grantsOf = async (payer: Payer) => (await listMyGrants(payer.userId, { limit: 100 })).grants;

async function grantForm(payer: Payer, fields: Record<string, string>) {
  return { idempotencyKey: onceKeyOf(bodyOf(await get(payer, '/console/grants')), '/console/grants'), currency: 'USD', ...fields };
}

describe('Grants', () => {
  it('renders the New grant form with its exact labels, the CSRF token, and an empty state that says what to do', async () => {
    const payer = await newPayer();
    const markup = bodyOf(await get(payer, '/console/grants'));
    for (const label of [
      'Agent ID',
      'Currency',
      'Per charge',
      'Daily',
      'Monthly',
      'Total',
      'Approval above',
      'Expires after (days)',
      'Description',
    ]) {
      expect(markup).toMatch(new RegExp(`<label for="g-[a-zA-Z]+">${label.replace(/[()]/g, '\\$&')}</label>`));
    }
    expect(markup).toContain('>Create grant</button>');
    expect(markup).toContain('No grants yet.');
    expectCsrfInEveryPostForm(markup, payer.session);
  });

  it('creates one grant on a double submit; the key is in the first answer only, never in a redirect or a replay', async () => {
    const payer = await newPayer();
    const agent = await newAgent('Weather Bot');
    const form = await grantForm(payer, {
      agentId: agent.id,
      perCharge: '5',
      daily: '10',
      monthly: '50',
      total: '20',
      approvalAbove: '2',
      expiresAfterDays: '30',
      description: 'weather lookups',
    });
    const first = await post(payer, '/console/grants', form);
    expect(first.kind).toBe('page');
    const key = />(ug_live_[^<]+)<\/textarea>/.exec(bodyOf(first))?.[1];
    expect(key).toBeDefined();
    expect(bodyOf(first)).toContain('It is shown only this once');
    const second = await post(payer, '/console/grants', form);
    expect(bodyOf(second)).toContain('This form was already submitted');
    expect(bodyOf(second)).not.toContain('ug_live_');
    const grants = await grantsOf(payer);
    expect(grants).toHaveLength(1);
    expect(grants[0]).toMatchObject({
      agentId: agent.id,
      currency: 'USD',
      limits: { perCharge: 500, daily: 1000, monthly: 5000, total: 2000 },
      approvalAbove: 200,
    });
    expect(grants[0]?.expiresAt).toBeDefined();

    const list = bodyOf(await get(payer, '/console/grants'));
    expect(list).toContain('Weather Bot');
    expect(list).toContain('0.00 USD of 20.00 USD');
    // `Revoke` is a link to its confirmation page (DESIGN §26).
    expect(list).toMatch(/<a class="button danger" href="\/console\/grants\/g[0-9a-z]+\/revoke">Revoke</);
    expect(list).not.toContain('ug_live_');
  });

  it('shows what a grant has spent of each limit', async () => {
    const payer = await newPayer();
    await credit(payer, '100', 'USD');
    const agent = await newAgent('Spender');
    const made = await post(payer, '/console/grants', await grantForm(payer, { agentId: agent.id, daily: '10', total: '20' }));
    expect(made.kind).toBe('page');
    const key = />(ug_live_[^<]+)<\/textarea>/.exec(bodyOf(made))?.[1] ?? '';
    const grant = (await lookupCredentials({ grantKeyHash: hashKey(key) })).grant;
    await createCharge({
      agent,
      userId: payer.userId,
      userKeyHash: hashKey(key),
      grant,
      idempotencyKey: 'g-1',
      amount: 350,
      currency: 'USD',
      description: 'forecast',
      baseUrl: 'http://localhost:3000',
    });
    const list = bodyOf(await get(payer, '/console/grants'));
    expect(list).toContain('3.50 USD of 10.00 USD today (UTC)');
    expect(list).toContain('3.50 USD of 20.00 USD');
    // And the charge is in the Statement's CSV with its grant (the Statement took Activity's place, DESIGN §26).
    const csv = await get(payer, '/console/statement/csv');
    expect(csv.kind === 'download' ? csv.body : '').toContain(`,${grant?.grantId ?? 'none'},`);
  });

  it.each([
    [{ agentId: 'nope' }, 'Agent ID must be an agent id'],
    [{ agentId: 'a00000000000000000000000000' }, 'Agent ID: agent not found'],
    [{ perCharge: 'ten' }, 'Per charge must be a number'],
    [{ total: '0.001' }, 'Total'],
    [{ expiresAfterDays: '0' }, 'Expires after (days) must be at least 1'],
    [{ expiresAfterDays: '400' }, 'Expires after (days) must be at most 365'],
    [{ expiresAfterDays: '1.5' }, 'Expires after (days) must be a whole number'],
    [{ currency: 'EUR' }, 'Currency must be one of USD, USDC'],
  ])('refuses %p with 400, the form again with what was typed, and no grant', async (fields, message) => {
    const payer = await newPayer();
    const agent = await newAgent();
    const form = await grantForm(payer, { agentId: agent.id, description: 'kept <b>as typed</b>', ...fields });
    const answer = await post(payer, '/console/grants', form);
    expect(statusOf(answer)).toBe(400);
    const markup = bodyOf(answer);
    expect(markup).toContain(message);
    expect(markup).toContain('value="kept &lt;b&gt;as typed&lt;/b&gt;"');
    expect(await grantsOf(payer)).toEqual([]);
  });

  it('shows every problem at once, each beside its field (aria-invalid, aria-describedby), the values kept (DESIGN §26)', async () => {
    const payer = await newPayer();
    const form = await grantForm(payer, { agentId: 'nope', perCharge: 'ten', total: '0.001', expiresAfterDays: '0', description: 'kept' });
    const answer = await post(payer, '/console/grants', form);
    expect(statusOf(answer)).toBe(400);
    const markup = bodyOf(answer);
    expect(markup).toContain('That did not work: 4 problems');
    for (const [name, message] of [
      ['agentId', 'Agent ID must be an agent id'],
      ['perCharge', 'Per charge must be a number'],
      ['total', 'Total'],
      ['expiresAfterDays', 'Expires after (days) must be at least 1'],
    ] as const) {
      const id = `g-${name}`;
      expect(markup).toContain(`<p class="field-error" id="${id}-error"><span class="visually-hidden">Error: </span>${message}`);
      expect(markup).toMatch(new RegExp(`<input id="${id}" [^>]*aria-describedby="${id}-error ${id}-hint" aria-invalid="true">`));
    }
    for (const value of ['nope', 'ten', '0.001', 'kept']) expect(markup).toContain(`value="${value}"`);
    expect(await grantsOf(payer)).toEqual([]);
  });

  it('lists grants before New grant; offers the agents dealt with by name; a name typed picks its agent; bars; Copy (DESIGN §26)', async () => {
    const payer = await newPayer();
    await credit(payer, '100', 'USD');
    const charger = await newAgent('Charger Bot');
    const granted = await newAgent('Granted Bot');
    await charge(charger, payer, '1', 'USD', 'work');
    const made = await post(payer, '/console/grants', await grantForm(payer, { agentId: granted.id, daily: '10' }));
    const shown = bodyOf(made);
    expect(shown).toContain('<button type="button" class="copy" data-copy="grant-key" hidden>Copy');
    expect(shown).toContain('id="grant-key-copied" role="status"');

    const markup = bodyOf(await get(payer, '/console/grants'));
    expect(markup.indexOf('id="list-h"')).toBeLessThan(markup.indexOf('id="new-h"'));
    expect(markup).toContain('list="g-agents"');
    expect(markup).toContain(`<option value="${charger.id}">Charger Bot</option>`);
    expect(markup).toContain(`<option value="${granted.id}">Granted Bot</option>`);
    expect(markup).toMatch(
      /<meter class="spent" min="0" max="1000" value="0" [^>]*aria-label="Daily: 0.00 USD of 10.00 USD today \(UTC\)"><\/meter>/,
    );

    // The name as typed (any case) is the agent the payer dealt with.
    const byName = await post(payer, '/console/grants', await grantForm(payer, { agentId: 'charger bot' }));
    expect(bodyOf(byName)).toContain('Charger Bot can now charge you');
    expect((await grantsOf(payer)).map((g) => g.agentId).sort()).toEqual([charger.id, granted.id].sort());
  });

  it('revokes a grant (again: the same), and refuses another payer’s grant with 404, changing nothing', async () => {
    const owner = await newPayer();
    const intruder = await newPayer();
    const agent = await newAgent();
    await post(owner, '/console/grants', await grantForm(owner, { agentId: agent.id }));
    const [grant] = await grantsOf(owner);
    const refused = await post(intruder, `/console/grants/${grant?.id}/revoke`, {});
    expect(statusOf(refused)).toBe(404);
    expect((await grantsOf(owner))[0]?.revokedAt).toBeUndefined();
    expect(statusOf(await post(intruder, '/console/grants/not-a-grant/revoke', {}))).toBe(404);

    // `Revoke` is a link to the confirmation (DESIGN §26), whose form posts the revocation.
    expect(bodyOf(await get(owner, '/console/grants'))).toContain(`href="/console/grants/${grant?.id}/revoke"`);
    expect(bodyOf(await get(owner, `/console/grants/${grant?.id}/revoke`))).toContain(`action="/console/grants/${grant?.id}/revoke"`);
    const revoked = await post(owner, `/console/grants/${grant?.id}/revoke`, {});
    expect(revoked).toEqual({ kind: 'redirect', location: `/console/grants#${grant?.id}` });
    expect(await post(owner, `/console/grants/${grant?.id}/revoke`, {})).toEqual(revoked);
    expect((await grantsOf(owner))[0]?.revokedAt).toBeDefined();
    const list = bodyOf(await get(owner, '/console/grants'));
    expect(list).toContain('Revoked');
    expect(list).not.toContain(`href="/console/grants/${grant?.id}/revoke"`);
  });
});
