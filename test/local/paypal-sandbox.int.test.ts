/**
 * The PayPal imitation's routing and the routes the rail does not use (bin/local/paypal-sandbox.ts),
 * over real loopback HTTP. What the rail relies on is tested through the rail, in
 * test/rails/paypal.rail.int.test.ts.
 */
import { type PaypalSandbox, startPaypalSandbox } from '../../bin/local/paypal-sandbox';

let sandbox: PaypalSandbox;
let token: string;

beforeAll(async () => {
  sandbox = await startPaypalSandbox();
  token = ((await (await requestToken(sandbox.clientSecret)).json()) as { access_token: string }).access_token;
});
afterAll(async () => {
  await sandbox.stop();
});

function requestToken(secret: string): Promise<Response> {
  return fetch(`${sandbox.url}/v1/oauth2/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${sandbox.clientId}:${secret}`).toString('base64')}` },
    body: 'grant_type=client_credentials',
  });
}

function api(method: string, path: string, body?: unknown, bearer = token): Promise<Response> {
  return fetch(`${sandbox.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const createBody = (senderBatchId: string) => ({
  sender_batch_header: { sender_batch_id: senderBatchId },
  items: [{ recipient_type: 'EMAIL', receiver: 'success@example.com', amount: { value: '1.00', currency: 'USD' }, sender_item_id: 'i1' }],
});

describe('PayPal imitation', () => {
  it('refuses wrong client credentials with invalid_client', async () => {
    const res = await requestToken('wrong');
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('checks the bearer token before it looks at the path', async () => {
    const unauthenticated = await api('GET', '/v1/nowhere', undefined, 'not-a-token');
    expect(unauthenticated.status).toBe(401);
    expect(await unauthenticated.json()).toMatchObject({ error: 'invalid_token' });

    const unknown = await api('GET', '/v1/nowhere');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ name: 'NOT_FOUND' });
  });

  it('shows an item by its id, with its batch, and answers every request with a debug id', async () => {
    const created = await api('POST', '/v1/payments/payouts', createBody('sandbox-item'));
    expect(created.status).toBe(201);
    expect(created.headers.get('paypal-debug-id')).toMatch(/^[0-9a-f]{13}$/);
    const item = sandbox.batchBySenderId('sandbox-item')?.items[0];

    const res = await api('GET', `/v1/payments/payouts-item/${item?.payoutItemId}`);

    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      payout_item_id: item?.payoutItemId,
      transaction_status: 'SUCCESS',
      sender_batch_id: 'sandbox-item',
      payout_item: { receiver: 'success@example.com', sender_item_id: 'i1' },
    });
    expect((await api('GET', '/v1/payments/payouts-item/NOSUCHITEM')).status).toBe(404);
  });

  it('answers an injected fault on a route, then serves it again', async () => {
    sandbox.failNext('get-batch', 1, 502);
    const batchId = sandbox.batchBySenderId('sandbox-item')?.payoutBatchId;

    const faulted = await api('GET', `/v1/payments/payouts/${batchId}`);
    expect(faulted.status).toBe(502);
    expect(await faulted.json()).toMatchObject({ message: 'Injected fault.' });
    expect((await api('GET', `/v1/payments/payouts/${batchId}`)).status).toBe(200);
  });

  it('answers malformed JSON and a missing sender_batch_id with VALIDATION_ERROR, creating nothing', async () => {
    const before = sandbox.batches().length;
    const malformed = await fetch(`${sandbox.url}/v1/payments/payouts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: '{',
    });
    const missing = await api('POST', '/v1/payments/payouts', { items: createBody('x').items });

    for (const res of [malformed, missing]) {
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ name: 'VALIDATION_ERROR' });
    }
    expect(sandbox.batches()).toHaveLength(before);
  });
});
