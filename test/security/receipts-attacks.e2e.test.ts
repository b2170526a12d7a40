/**
 * Attacks on receipts (DESIGN §27, issue 41): a receipt is worth something only if nobody but the
 * service can make one that verifies, and nobody but a party can read one. The attacker forges a
 * receipt with a key of their own, re-signs a real receipt's payload with a raised amount, sends
 * one as `alg: none` or as HS256 keyed with the published public key (algorithm confusion), asks
 * for the receipt of someone else's charge, and asks for one of a charge that has not settled. A
 * receiver checks with stock jose and the published key set; the service answers 404 to all but a
 * party, never a 403 that would say the movement exists.
 */
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { CompactSign, compactVerify, createLocalJWKSet, importJWK, type JSONWebKeySet } from 'jose';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack();
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
