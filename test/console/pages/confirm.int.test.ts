/**
 * Destructive actions ask first (DESIGN §26) against DynamoDB Local: the rotation's confirmation
 * says by number what it ends (active grants, webhook endpoints, sessions) and carries the form
 * with its one-time key; the revocation's names the grant, its agent and what it has left, and
 * another payer's grant is 404; a grant no longer active offers no button. `Cancel` goes back.
 */
import { listMyGrants } from '../../../functions/use-cases/identity/grants';
import {
  bodyOf,
  consolePagesEnv,
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

async function grant(payer: Payer, fields: Record<string, string>) {
  const idempotencyKey = onceKeyOf(bodyOf(await get(payer, '/console/grants')), '/console/grants');
  expect(statusOf(await post(payer, '/console/grants', { idempotencyKey, currency: 'USD', ...fields }))).toBe(200);
}

describe('the rotation’s confirmation', () => {
  it('says how many grants and endpoints a rotation ends, and its form rotates', async () => {
    const payer = await newPayer();
    const agent = await newAgent('Weather Bot');
    await grant(payer, { agentId: agent.id });
    await grant(payer, { agentId: agent.id });
    await grant(payer, { agentId: agent.id });
    const [revoked] = await grantsOf(payer);
    expect(statusOf(await post(payer, `/console/grants/${revoked?.id}/revoke`, {}))).toBe(303);
    const developers = bodyOf(await get(payer, '/console/developers'));
    await post(payer, '/console/developers/webhooks', {
      url: 'http://127.0.0.1:9/hooks',
      idempotencyKey: onceKeyOf(developers, '/console/developers/webhooks'),
    });

    const confirmation = await get(payer, '/console/developers/rotate');
    const markup = bodyOf(confirmation);
    expect(confirmation).toMatchObject({ kind: 'page', title: 'Rotate your account key?', nav: 'developers' });
    expect(markup).toContain('<strong>2 active grants</strong> revoked');
    expect(markup).toContain('<strong>1 webhook endpoint</strong> deleted');
    expect(markup).toContain('signed out, this one included');
    expect(markup).toContain('<a class="button" href="/console/developers">Cancel</a>');
    expect(markup).toContain('>Rotate account key</button>');
    expectCsrfInEveryPostForm(markup, payer.session);

    const rotated = bodyOf(
      await post(payer, '/console/developers/rotate', { idempotencyKey: onceKeyOf(markup, '/console/developers/rotate') }),
    );
    expect(rotated).toContain('2 grants were revoked and 1 webhook endpoint was deleted.');
  });

  it('says nothing will be revoked for a payer with no grants or endpoints', async () => {
    const payer = await newPayer();
    const markup = bodyOf(await get(payer, '/console/developers/rotate'));
    expect(markup).toContain('<strong>0 active grants</strong>');
    expect(markup).toContain('<strong>0 webhook endpoints</strong>');
  });
});

describe('the revocation’s confirmation', () => {
  it('names the grant and what it has left; another payer’s grant is 404; a revoked one has no button', async () => {
    const owner = await newPayer();
    const intruder = await newPayer();
    const agent = await newAgent('Forecast <b>Bot</b>');
    await grant(owner, { agentId: agent.id, total: '10', daily: '4', perCharge: '2', description: 'forecasts' });
    const [g] = await grantsOf(owner);
    const path = `/console/grants/${g?.id}/revoke`;

    const markup = bodyOf(await get(owner, path));
    expect(markup).toContain('Forecast &lt;b&gt;Bot&lt;/b&gt; can no longer charge you in USD');
    expect(markup).toContain('forecasts');
    expect(markup).toContain('10.00 USD of 10.00 USD in total; 4.00 USD of 4.00 USD today (UTC); at most 2.00 USD a charge');
    expect(markup).toContain(`action="${path}"`);
    expect(markup).toContain('>Revoke grant</button>');
    expect(markup).toContain(`<a class="button" href="/console/grants#${g?.id}">Cancel</a>`);
    expectCsrfInEveryPostForm(markup, owner.session);

    expect(statusOf(await get(intruder, path))).toBe(404);
    expect(statusOf(await get(owner, '/console/grants/not-a-grant/revoke'))).toBe(404);

    expect(await post(owner, path, {})).toEqual({ kind: 'redirect', location: `/console/grants#${g?.id}` });
    const after = bodyOf(await get(owner, path));
    expect(after).toContain('This grant was revoked: there is nothing to revoke.');
    expect(after).not.toContain('<form');
  });
});
