/**
 * Limits and Developers (DESIGN §11, §15, §21) against DynamoDB Local: Save limits through the
 * API's policy use case (refusals change nothing, per-agent rules kept), Block / Unblock as the
 * policy's `agents.<id>.blocked` (a blocked agent's charge is refused), the account key rotated
 * once per form key and shown once, webhook endpoints added once, deleted, their deliveries, and
 * another payer's endpoint refused.
 */
import { serialize } from '../../../functions/contracts/json';
import { hashKey } from '../../../functions/core/keys';
import { getUserKeyHash } from '../../../functions/store/identity/user.repository';
import { listOwnerWebhooks } from '../../../functions/use-cases/events/webhooks';
import { policyView, readPolicy } from '../../../functions/use-cases/identity/payers';
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

/** The stored policy as the API's JSON reads it (exact amounts as numbers). */
const policyOf = async (payer: Payer) => JSON.parse(serialize(policyView(await readPolicy(payer.userId))));
const webhooksOf = async (payer: Payer) => await listOwnerWebhooks({ kind: 'user', id: payer.userId });

describe('Limits', () => {
  it('saves the policy per currency and the approval window in minutes, and shows it again', async () => {
    const payer = await newPayer();
    const empty = bodyOf(await get(payer, '/console/limits'));
    expect(empty).toContain('>Save limits</button>');
    expect(empty).toContain('No agents yet.');
    expectCsrfInEveryPostForm(empty, payer.session);
    const saved = await post(payer, '/console/limits', {
      'perCharge.USD': '50',
      'daily.USD': '200',
      'monthly.USDC': '1000.5',
      'approvalAbove.USD': '10',
      approvalWindowMinutes: '20',
    });
    expect(saved).toEqual({ kind: 'redirect', location: '/console/limits?done=saved' });
    expect(await policyOf(payer)).toEqual({
      perCharge: { USD: 50 },
      daily: { USD: 200 },
      monthly: { USDC: 1000.5 },
      approvalAbove: { USD: 10 },
      approvalWindowSeconds: 1200,
    });
    const shown = bodyOf(await get(payer, '/console/limits?done=saved'));
    expect(shown).toContain('Limits saved.');
    expect(shown).toContain('id="l-perCharge-USD" name="perCharge.USD" type="text" inputmode="decimal" autocomplete="off" value="50"');
    expect(shown).toContain('value="20"');
  });

  it.each([
    [{ 'perCharge.USD': 'abc' }, 'Per charge (USD) must be a number'],
    [{ 'daily.USD': '0.001' }, 'Daily (USD)'],
    [{ approvalWindowMinutes: '0.5' }, 'Approval window (minutes) must be at least 1'],
    [{ approvalWindowMinutes: '20000' }, 'Approval window (minutes) must be at most 10080'],
  ])('refuses %p with 400 and what was typed, the stored policy unchanged', async (form, message) => {
    const payer = await newPayer();
    await post(payer, '/console/limits', { 'perCharge.USD': '5' });
    const answer = await post(payer, '/console/limits', form);
    expect(statusOf(answer)).toBe(400);
    expect(bodyOf(answer)).toContain(message);
    expect(await policyOf(payer)).toEqual({ perCharge: { USD: 5 } });
  });

  it('shows every problem at once, each beside its field, with what was typed (DESIGN §26)', async () => {
    const payer = await newPayer();
    const answer = await post(payer, '/console/limits', { 'perCharge.USD': 'abc', 'daily.USD': '0.001', approvalWindowMinutes: '20000' });
    expect(statusOf(answer)).toBe(400);
    const markup = bodyOf(answer);
    expect(markup).toContain('That did not work: 3 problems');
    for (const [id, message] of [
      ['l-perCharge-USD', 'Per charge (USD) must be a number'],
      ['l-daily-USD', 'Daily (USD)'],
      ['l-window', 'Approval window (minutes) must be at most 10080'],
    ] as const) {
      expect(markup).toMatch(
        new RegExp(
          `<p class="field-error" id="${id}-error"><span class="visually-hidden">Error: </span>${message.replace(/[()]/g, '\\$&')}`,
        ),
      );
      expect(markup).toMatch(new RegExp(`<input id="${id}" [^>]*aria-describedby="${id}-error ${id}-hint" aria-invalid="true">`));
      expect(markup).toContain(`<a href="#${id}">${message}`);
    }
    expect(markup).toContain('value="abc"');
    expect(markup).toContain('value="20000"');
    expect(markup).not.toMatch(/<input id="l-monthly-USD" [^>]*aria-invalid/);
  });

  it('blocks an agent the payer paid (its next charge refused with 403), keeps it listed, and unblocks it', async () => {
    const payer = await newPayer();
    await credit(payer, '20', 'USD');
    const agent = await newAgent('Blocky');
    expect((await charge(agent, payer, '1', 'USD', 'first')).statusCode).toBe(201);
    const listed = bodyOf(await get(payer, '/console/limits'));
    expect(listed).toContain('Blocky');
    expect(listed).toContain(`action="/console/limits/agents/${agent.id}/block"`);

    expect(await post(payer, `/console/limits/agents/${agent.id}/block`, {})).toEqual({
      kind: 'redirect',
      location: '/console/limits?done=blocked',
    });
    expect(await policyOf(payer)).toEqual({ agents: { [agent.id]: { blocked: true } } });
    const refused = await charge(agent, payer, '1', 'USD', 'second');
    expect(refused.statusCode).toBe(403);
    const blocked = bodyOf(await get(payer, '/console/limits'));
    expect(blocked).toContain('Blocked');
    expect(blocked).toContain('>Unblock</button>');

    // Saving the payer-wide limits keeps the agent's entry.
    await post(payer, '/console/limits', { 'perCharge.USD': '5' });
    expect(await policyOf(payer)).toEqual({ perCharge: { USD: 5 }, agents: { [agent.id]: { blocked: true } } });

    await post(payer, `/console/limits/agents/${agent.id}/unblock`, {});
    expect(await policyOf(payer)).toEqual({ perCharge: { USD: 5 } });
    expect((await charge(agent, payer, '1', 'USD', 'third')).statusCode).toBe(201);
  });

  it('refuses to block an id that is no agent (400), changing nothing', async () => {
    const payer = await newPayer();
    const answer = await post(payer, '/console/limits/agents/a00000000000000000000000000/block', {});
    expect(statusOf(answer)).toBe(400);
    expect(bodyOf(answer)).toContain('is not a registered agent');
    expect(statusOf(await post(payer, '/console/limits/agents/x/block', {}))).toBe(400);
    expect(await policyOf(payer)).toEqual({});
  });
});

describe('Developers', () => {
  it('says before the button what a rotation ends, rotates once per form key and shows the new key once', async () => {
    const payer = await newPayer();
    const page = bodyOf(await get(payer, '/console/developers'));
    expect(page).toContain('Rotating also revokes every grant you gave and deletes every webhook endpoint');
    expect(page.indexOf('Rotating also revokes')).toBeLessThan(page.indexOf('>Rotate account key</a>'));
    // The button is a link to the confirmation (DESIGN §26): its form carries the one-time key.
    expect(page).toContain('<a class="button danger" href="/console/developers/rotate">Rotate account key</a>');
    expectCsrfInEveryPostForm(page, payer.session);
    const confirmation = bodyOf(await get(payer, '/console/developers/rotate'));
    expectCsrfInEveryPostForm(confirmation, payer.session);
    const form = { idempotencyKey: onceKeyOf(confirmation, '/console/developers/rotate') };
    const first = bodyOf(await post(payer, '/console/developers/rotate', form));
    const key = />(uk_live_[^<]+)<\/textarea>/.exec(first)?.[1] ?? '';
    expect(key).not.toBe('');
    expect(await getUserKeyHash(payer.userId)).toBe(hashKey(key));
    const second = bodyOf(await post(payer, '/console/developers/rotate', form));
    expect(second).toContain('This form was already submitted and your account key was rotated then');
    expect(second).not.toContain('uk_live_');
    // Still the first rotation's key: the double submit rotated once.
    expect(await getUserKeyHash(payer.userId)).toBe(hashKey(key));
  });

  it('adds an endpoint once per form key with its secret shown once, lists it, shows its deliveries and deletes it', async () => {
    const payer = await newPayer();
    const page = bodyOf(await get(payer, '/console/developers'));
    expect(page).toContain('No endpoints yet.');
    const form = { url: 'http://127.0.0.1:9/hooks', idempotencyKey: onceKeyOf(page, '/console/developers/webhooks') };
    const [a, b] = await Promise.all([
      post(payer, '/console/developers/webhooks', form),
      post(payer, '/console/developers/webhooks', form),
    ]);
    const secrets = [bodyOf(a), bodyOf(b)].map((m) => />(whsec_[^<]+)<\/textarea>/.exec(m)?.[1]).filter(Boolean);
    expect(secrets).toHaveLength(1);
    const hooks = await webhooksOf(payer);
    expect(hooks).toHaveLength(1);
    const id = hooks[0]?.id ?? '';
    expect(bodyOf(await get(payer, '/console/developers'))).toContain('http://127.0.0.1:9/hooks');
    const deliveries = bodyOf(await get(payer, `/console/developers/webhooks/${id}`));
    expect(deliveries).toContain('No deliveries yet.');
    expect(await post(payer, `/console/developers/webhooks/${id}/test`, {})).toEqual({
      kind: 'redirect',
      location: `/console/developers/webhooks/${id}?done=ping`,
    });
    expect(await post(payer, `/console/developers/webhooks/${id}/delete`, {})).toEqual({
      kind: 'redirect',
      location: '/console/developers?done=deleted',
    });
    expect(await webhooksOf(payer)).toEqual([]);
  });

  it('refuses a bad URL with 400 and adds nothing', async () => {
    const payer = await newPayer();
    const page = bodyOf(await get(payer, '/console/developers'));
    const answer = await post(payer, '/console/developers/webhooks', {
      url: 'ftp://x',
      idempotencyKey: onceKeyOf(page, '/console/developers/webhooks'),
    });
    expect(statusOf(answer)).toBe(400);
    expect(bodyOf(answer)).toContain('value="ftp://x"');
    expect(await webhooksOf(payer)).toEqual([]);
  });

  it('refuses another payer’s endpoint with 404 everywhere, changing nothing', async () => {
    const owner = await newPayer();
    const intruder = await newPayer();
    const page = bodyOf(await get(owner, '/console/developers'));
    await post(owner, '/console/developers/webhooks', {
      url: 'http://127.0.0.1:9/mine',
      idempotencyKey: onceKeyOf(page, '/console/developers/webhooks'),
    });
    const [hook] = await webhooksOf(owner);
    expect(statusOf(await get(intruder, `/console/developers/webhooks/${hook?.id}`))).toBe(404);
    expect(statusOf(await post(intruder, `/console/developers/webhooks/${hook?.id}/delete`, {}))).toBe(404);
    expect(statusOf(await post(intruder, `/console/developers/webhooks/${hook?.id}/test`, {}))).toBe(404);
    expect(await webhooksOf(owner)).toHaveLength(1);
  });
});
