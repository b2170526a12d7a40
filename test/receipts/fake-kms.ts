/**
 * A stand-in for KMS's two signing calls, on the SDK's documented request and response shapes: an
 * ECC_NIST_P256 SIGN_VERIFY key per id, `Sign` (ECDSA_SHA_256 over a 32-byte `DIGEST`) answering a
 * DER signature, `GetPublicKey` answering the SPKI DER. Real KMS cannot run here; the keys are made
 * with node:crypto and the digest is signed as given (no second hash) with @noble/curves, as KMS
 * signs a `DIGEST`. It records the requests, so a test sees what the signer asked.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { GetPublicKeyCommandInput, SignCommandInput } from '@aws-sdk/client-kms';
import { p256 } from '@noble/curves/nist.js';
import type { KmsSigning } from '../../functions/receipts/kms-signer';

export interface FakeKms extends KmsSigning {
  signed: SignCommandInput[];
  /** The public key of `keyId` (node:crypto), to check a signature against. */
  publicKey(keyId: string): KeyObject;
}

export function fakeKms(keyIds: readonly string[]): FakeKms {
  const keys = new Map(
    keyIds.map((id) => {
      const pair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      const d = Buffer.from(String(pair.privateKey.export({ format: 'jwk' }).d), 'base64url');
      return [id, { ...pair, d }] as const;
    }),
  );
  const keyOf = (id: string | undefined) => {
    const key = id === undefined ? undefined : keys.get(id);
    if (!key) throw Object.assign(new Error(`Key '${id}' does not exist`), { name: 'NotFoundException' });
    return key;
  };
  const signed: SignCommandInput[] = [];
  return {
    signed,
    publicKey: (id) => keyOf(id).publicKey,
    async sign(input) {
      signed.push(input);
      const key = keyOf(input.KeyId);
      if (input.SigningAlgorithm !== 'ECDSA_SHA_256') throw Object.assign(new Error('bad algorithm'), { name: 'InvalidKeyUsageException' });
      const message = input.Message;
      if (!message) throw new Error('Message is required');
      if (input.MessageType !== 'DIGEST' || message.length !== 32) throw new Error('this fake takes a 32-byte DIGEST only');
      return {
        KeyId: input.KeyId,
        SigningAlgorithm: 'ECDSA_SHA_256',
        Signature: p256.sign(message, key.d, { prehash: false, format: 'der' }),
      };
    },
    async getPublicKey(input: GetPublicKeyCommandInput) {
      const key = keyOf(input.KeyId);
      return { PublicKey: key.publicKey.export({ format: 'der', type: 'spki' }), KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' };
    },
  };
}
