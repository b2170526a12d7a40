/**
 * The receipt signers make compact JWS that stock jose verifies against the published key set, and
 * no changed byte does. The KMS signer runs against a fake KMS on the SDK's request and response
 * shapes (fake-kms.ts): real KMS cannot run here, so what is shown is that the signer asks for the
 * documented call (ECDSA_SHA_256 over a DIGEST) and turns KMS's DER answer into a JWS signature.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, errors } from 'jose';
import type { ReceiptFacts } from '../../functions/core/receipts';
import { derToJose } from '../../functions/receipts/der';
import { kmsSigner } from '../../functions/receipts/kms-signer';
import { localSigner } from '../../functions/receipts/local-signer';
import { publishedKeys, type ReceiptSigner, signReceipt } from '../../functions/receipts/signer';
import { fakeKms } from './fake-kms';

const FACTS: ReceiptFacts = {
  v: 1,
  type: 'charge',
  id: 'c01jabcdefghjkmnpqrstvwxyz0a01jabcdefghjkmnpqrstvwxyz0',
  amount: '12.34',
  currency: 'USD',
  payer: { kind: 'user', id: 'u01jabcdefghjkmnpqrstvwxyz0' },
  payee: { kind: 'agent', id: 'a01jabcdefghjkmnpqrstvwxyz0' },
  status: 'SUCCESS',
  settledAt: '2026-11-29T10:00:00.000Z',
};

const localKeyPem = () =>
  generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

async function verifies(signer: ReceiptSigner, jws: string): Promise<boolean> {
  try {
    await compactVerify(jws, createLocalJWKSet(await publishedKeys(signer)), { algorithms: ['ES256'] });
    return true;
  } catch {
    return false;
  }
}

/** Every receipt with one byte of its header, payload or signature changed (decoded bytes, re-encoded). */
function everyChangedByte(jws: string): string[] {
  const parts = jws.split('.').map((p) => Buffer.from(p, 'base64url'));
  return parts.flatMap((part, which) =>
    [...part.keys()].map((i) => {
      const changed = Buffer.from(part);
      changed[i] = (changed[i] as number) ^ 0x01;
      return parts.map((p, k) => (k === which ? changed : p).toString('base64url')).join('.');
    }),
  );
}

describe.each([
  ['the local key file', () => ({ signer: localSigner(localKeyPem()), kms: undefined })],
  [
    'a KMS asymmetric key (a fake KMS)',
    () => {
      const kms = fakeKms(['key-1']);
      return { signer: kmsSigner(kms, { keyId: 'key-1', previousKeyIds: [] }), kms };
    },
  ],
])('a receipt signed with %s', (_name, make) => {
  it('is a compact JWS, ES256, with the key id and typ receipt+jwt, and the payload exactly as given with iat', async () => {
    const { signer } = make();
    const jws = await signReceipt(signer, FACTS, new Date('2026-11-29T10:00:05.900Z'));
    const { kid } = await signer.current();
    expect(decodeProtectedHeader(jws)).toEqual({ alg: 'ES256', kid, typ: 'receipt+jwt' });
    const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet(await publishedKeys(signer)));
    expect(protectedHeader.kid).toBe(kid);
    expect(JSON.parse(Buffer.from(payload).toString('utf8'))).toEqual({ ...FACTS, iat: 1795946405 });
    expect(Object.keys(JSON.parse(Buffer.from(payload).toString('utf8')))).toEqual([...Object.keys(FACTS), 'iat']);
  });

  it('publishes its key with kid, alg ES256 and use sig, public members only', async () => {
    const { signer } = make();
    const { keys } = await publishedKeys(signer);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: expect.any(String),
      y: expect.any(String),
      kid: (await signer.current()).kid,
      alg: 'ES256',
      use: 'sig',
    });
  });

  it('fails verification when any one byte of it changes', async () => {
    const { signer } = make();
    const jws = await signReceipt(signer, FACTS);
    expect(await verifies(signer, jws)).toBe(true);
    const changed = everyChangedByte(jws);
    expect(changed.length).toBeGreaterThan(200);
    const passing = [];
    for (const forged of changed) if (await verifies(signer, forged)) passing.push(forged);
    expect(passing).toEqual([]);
  });
});

describe('the KMS signer', () => {
  it('asks KMS for ECDSA_SHA_256 over the SHA-256 digest of the JWS signing input (MessageType DIGEST)', async () => {
    const kms = fakeKms(['key-1']);
    const jws = await signReceipt(kmsSigner(kms, { keyId: 'key-1', previousKeyIds: [] }), FACTS);
    const input = jws.split('.').slice(0, 2).join('.');
    expect(kms.signed).toEqual([
      {
        KeyId: 'key-1',
        Message: createHash('sha256').update(input).digest(),
        MessageType: 'DIGEST',
        SigningAlgorithm: 'ECDSA_SHA_256',
      },
    ]);
  });

  it('keeps a rotated key listed: the set has the current key first, then the previous ones', async () => {
    const kms = fakeKms(['old', 'new']);
    const before = kmsSigner(kms, { keyId: 'old', previousKeyIds: [] });
    const oldReceipt = await signReceipt(before, FACTS);
    const after = kmsSigner(kms, { keyId: 'new', previousKeyIds: ['old'] });
    const set = await publishedKeys(after);
    expect(set.keys.map((k) => k.kid)).toEqual([(await after.current()).kid, (await before.current()).kid]);
    // The receipt the old key signed still verifies against the set published after the rotation.
    await expect(compactVerify(oldReceipt, createLocalJWKSet(set))).resolves.toBeDefined();
    await expect(compactVerify(await signReceipt(after, FACTS), createLocalJWKSet(set))).resolves.toBeDefined();
    // And one signed by a key the set does not list does not.
    const stranger = kmsSigner(fakeKms(['x']), { keyId: 'x', previousKeyIds: [] });
    await expect(compactVerify(await signReceipt(stranger, FACTS), createLocalJWKSet(set))).rejects.toBeInstanceOf(
      errors.JWKSNoMatchingKey,
    );
  });

  it('refuses a key that is not an ECC_NIST_P256 signing key', async () => {
    const kms = fakeKms(['k']);
    const wrong = { ...kms, getPublicKey: async () => ({ ...(await kms.getPublicKey({ KeyId: 'k' })), KeySpec: 'RSA_2048' as const }) };
    await expect(kmsSigner(wrong, { keyId: 'k', previousKeyIds: [] }).current()).rejects.toThrow('not ECC_NIST_P256');
  });
});

describe('derToJose', () => {
  const der = (r: number[], s: number[]) => Uint8Array.from([0x30, r.length + s.length + 4, 0x02, r.length, ...r, 0x02, s.length, ...s]);

  it('drops the sign byte of a high integer and left-pads a short one to 32 bytes each', () => {
    const high = [0x00, 0x80, ...Array(31).fill(0x11)];
    const short = Array(30).fill(0x22);
    const raw = derToJose(der(high, short));
    expect(Buffer.from(raw).toString('hex')).toBe(`80${'11'.repeat(31)}0000${'22'.repeat(30)}`);
  });

  it('gives what @noble/curves gives as compact for many real signatures', () => {
    const secret = p256.utils.randomSecretKey();
    for (let i = 0; i < 200; i++) {
      const digest = createHash('sha256').update(String(i)).digest();
      const compact = p256.sign(digest, secret, { prehash: false });
      const asDer = p256.Signature.fromBytes(compact).toBytes('der');
      expect(Buffer.from(derToJose(asDer)).equals(Buffer.from(compact))).toBe(true);
    }
  });

  it('refuses what is not one DER signature', () => {
    expect(() => derToJose(Uint8Array.from([0x31, 0x00]))).toThrow('not a DER sequence');
    expect(() => derToJose(Uint8Array.from([...der([1], [2]), 0x00]))).toThrow('length does not match');
    expect(() => derToJose(der(Array(33).fill(0x7f), [1]))).toThrow('larger than the curve');
  });
});
