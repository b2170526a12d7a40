/**
 * Attacks on receipts (DESIGN §27, issue 41): a receipt is worth something only if nobody but the
 * service can make one that verifies, and nobody but a party can read one. The attacker forges a
 * receipt with a key of their own, re-signs a real receipt's payload with a raised amount, sends
 * one as `alg: none` or as HS256 keyed with the published public key (algorithm confusion), asks
 * for the receipt of someone else's charge or refund of an x402 payment, and asks for one of a
 * charge or refund that has not settled, or with a grant key. A receiver checks with stock jose and
 * the published key set; the service answers 404 to all but a party, never a 403 that would say the
 * movement exists.
 */
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { CompactSign, compactVerify, createLocalJWKSet, importJWK, type JSONWebKeySet } from 'jose';
import { hashKey } from '../../functions/core/keys';
import { refundX402Payment } from '../../functions/use-cases/x402-refunds/refunds';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { useRefundFixture } from '../support/x402-refunds';

const t = useTestStack();
const f = useRefundFixture(t);
auditAfterAll();

let seq = 0;
const idem = () => `receipt-attacks-${process.pid}-${++seq}-${Date.now()}`;
const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

let keys: JSONWebKeySet;
let real: string;
let chargeId: string;
let party: { agent: { key: string; id: string }; user: { key: string; id: string } };

beforeAll(async () => {
  const agent = await t.enabledAgent();
  const user = await t.fundedUser({ USD: 20 });
  party = { agent, user };
  const made = await t.call<{ id: string }>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': idem() },
    body: { amount: 1, currency: 'USD', description: 'attacked' },
  });
  chargeId = made.body.id;
  real = (await t.call<{ receipt: string }>('GET', `/api/v1/receipts/${chargeId}`, { headers: { 'x-agent-key': agent.key } })).body.receipt;
  keys = (await t.call<JSONWebKeySet>('GET', '/.well-known/jwks.json')).body;
});

/** What a receiver does: stock jose, the published set, ES256 only. */
const receiverAccepts = async (jws: string) =>
  compactVerify(jws, createLocalJWKSet(keys), { algorithms: ['ES256'] }).then(
    () => true,
    () => false,
  );
/** And one that forgot to pin the algorithm: jose still refuses what the key cannot verify. */
const carelessReceiverAccepts = async (jws: string) =>
  compactVerify(jws, createLocalJWKSet(keys)).then(
    () => true,
    () => false,
  );

const payloadOf = (jws: string) =>
  JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;

describe('forged receipts', () => {
  it('the real receipt verifies (the baseline)', async () => {
    expect(await receiverAccepts(real)).toBe(true);
  });

  it('a receipt signed with another P-256 key, naming the real kid, does not verify', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const header = JSON.parse(Buffer.from(real.split('.')[0] ?? '', 'base64url').toString('utf8'));
    const forged = await new CompactSign(Buffer.from(JSON.stringify(payloadOf(real)))).setProtectedHeader(header).sign(privateKey);
    expect(await receiverAccepts(forged)).toBe(false);
    expect(await carelessReceiverAccepts(forged)).toBe(false);
  });

  it('the real payload with a raised amount, re-signed by another key or keeping the real signature, does not verify', async () => {
    const raised = { ...payloadOf(real), amount: '1000' };
    const [header, , signature] = real.split('.');
    expect(await receiverAccepts(`${header}.${b64(raised)}.${signature}`)).toBe(false);
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const resigned = await new CompactSign(Buffer.from(JSON.stringify(raised)))
      .setProtectedHeader(JSON.parse(Buffer.from(header ?? '', 'base64url').toString('utf8')))
      .sign(privateKey);
    expect(await receiverAccepts(resigned)).toBe(false);
  });

  it('alg none and HS256 keyed with the published public key (algorithm confusion) do not verify, pinned or not', async () => {
    const kid = keys.keys[0]?.kid;
    const payload = b64({ ...payloadOf(real), amount: '1000' });
    const none = `${b64({ alg: 'none', kid, typ: 'receipt+jwt' })}.${payload}.`;
    const hsInput = `${b64({ alg: 'HS256', kid, typ: 'receipt+jwt' })}.${payload}`;
    // Keyed with the JWK's JSON and with its x coordinate: what a confused verifier might use as the secret.
    const secrets = [JSON.stringify(keys.keys[0]), String(keys.keys[0]?.x)];
    const hs = secrets.map((secret) => `${hsInput}.${createHmac('sha256', secret).update(hsInput).digest('base64url')}`);
    for (const jws of [none, ...hs]) {
      expect(await receiverAccepts(jws)).toBe(false);
      expect(await carelessReceiverAccepts(jws)).toBe(false);
    }
    // The published key is an ES256 key and nothing else: jose will not use it for HMAC.
    await expect(importJWK({ ...keys.keys[0], alg: 'HS256' })).rejects.toThrow();
  });
});

describe('receipts of movements that are not the caller’s, or not settled', () => {
  it('404 receipt not found for another agent and another payer, the same answer as an unknown id', async () => {
    const stranger = await t.enabledAgent();
    const otherPayer = await t.fundedUser();
    for (const headers of [{ 'x-agent-key': stranger.key }, { 'x-user-key': otherPayer.key }] as Record<string, string>[]) {
      for (const id of [chargeId, `${chargeId}.refund`]) {
        const res = await t.call('GET', `/api/v1/receipts/${id}`, { headers });
        expect([id, res.status, res.body]).toEqual([id, 404, { error: 'receipt not found' }]);
      }
    }
    const unknown = await t.call('GET', `/api/v1/receipts/c${'0'.repeat(26)}${party.agent.id}`, {
      headers: { 'x-agent-key': stranger.key },
    });
    expect([unknown.status, unknown.body]).toEqual([404, { error: 'receipt not found' }]);
  });

  it('404 for a charge that has not settled, held or awaiting the payer, to its own parties too', async () => {
    const hold = await t.call<{ id: string; status: string }>('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': party.agent.key, 'x-user-key': party.user.key, 'idempotency-key': idem() },
      body: { amount: 1, currency: 'USD', capture: false },
    });
    expect(hold.body.status).toBe('PENDING');
    for (const headers of [{ 'x-agent-key': party.agent.key }, { 'x-user-key': party.user.key }] as Record<string, string>[]) {
      const res = await t.call('GET', `/api/v1/receipts/${hold.body.id}`, { headers });
      expect([res.status, res.body]).toEqual([404, { error: 'receipt not found' }]);
    }
  });

  it('404 for ids of no movement, crafted or not', async () => {
    for (const id of ['..%2F..%2Fjwks.json', '%00', 'x'.repeat(500), `${chargeId}.refund.refund`, `${chargeId}%2Erefund`]) {
      const res = await t.call('GET', `/api/v1/receipts/${id}`, { headers: { 'x-agent-key': party.agent.key } });
      expect([id, res.status]).toEqual([id, 404]);
    }
  });
});

describe('receipts of refunds of x402 payments', () => {
  const NOT_FOUND = [404, { error: 'receipt not found' }];
  const get = (id: string, headers: Record<string, string>) => t.call('GET', `/api/v1/receipts/${id}`, { headers });

  it("404 for another agent's completed refund and for any payer, the same answer as an unknown xr id", async () => {
    const seller = await f.seller();
    const paymentId = await f.pay(seller);
    const refund = await f.refund(seller.key, paymentId, { body: { amount: 0.002 } });
    expect(refund.status).toBe(202);
    expect((await f.untilFinal(seller.key, refund.body.id)).status).toBe('COMPLETED');
    // The baseline: its own agent reads it.
    expect((await get(refund.body.id, { 'x-agent-key': seller.key })).status).toBe(200);
    const stranger = await t.enabledAgent();
    for (const headers of [{ 'x-agent-key': stranger.key }, { 'x-user-key': party.user.key }] as Record<string, string>[]) {
      const res = await get(refund.body.id, headers);
      expect([res.status, res.body]).toEqual(NOT_FOUND);
    }
    const unknown = await get(`xr${'0'.repeat(26)}`, { 'x-agent-key': seller.key });
    expect([unknown.status, unknown.body]).toEqual(NOT_FOUND);
    // An x402 payment's id with `.refund` is no receipt: its refunds are known by their own ids.
    const suffixed = await get(`${paymentId}.refund`, { 'x-agent-key': seller.key });
    expect([suffixed.status, suffixed.body]).toEqual(NOT_FOUND);
  });

  it('404 for a refund still PENDING, to its own agent too', async () => {
    const seller = await f.seller();
    const paymentId = await f.pay(seller);
    // The refund committed (debited, PENDING) whose message the payout worker has not taken yet: it is
    // handed to no queue here, and the reconciler re-sends a PENDING refund only after two minutes.
    const pending = await refundX402Payment(
      { agentKeyHash: hashKey(seller.key), paymentId, idempotencyKey: idem(), amount: 3_000 },
      { enqueue: async () => undefined },
    );
    const refundId = 'id' in pending ? pending.id : '';
    expect((await f.read(seller.key, refundId)).body.status).toBe('PENDING');
    const res = await get(refundId, { 'x-agent-key': seller.key });
    expect([res.status, res.body]).toEqual(NOT_FOUND);
    expect((await f.read(seller.key, refundId)).body.status).toBe('PENDING');
  });

  it('refuses a grant key as for every receipt: it is no party’s credential, the agent reads with its own key', async () => {
    const seller = await f.seller();
    const paymentId = await f.pay(seller);
    const refund = await f.refund(seller.key, paymentId, { body: { amount: 0.001 } });
    expect((await f.untilFinal(seller.key, refund.body.id)).status).toBe('COMPLETED');
    const payer = await t.fundedUser({ USDC: 1 });
    const grant = await t.call<{ key: string }>('POST', '/api/v1/users/me/grants', {
      headers: { 'x-user-key': payer.key },
      body: { agentId: seller.id, currency: 'USDC', limits: { total: 1 } },
    });
    expect(grant.status).toBe(201);
    for (const header of ['x-user-key', 'x-agent-key']) {
      const onRefund = await get(refund.body.id, { [header]: grant.body.key });
      const onCharge = await get(chargeId, { [header]: grant.body.key });
      expect(onRefund.status).toBe(401);
      expect([header, onRefund.status, onRefund.body]).toEqual([header, onCharge.status, onCharge.body]);
    }
  });
});
