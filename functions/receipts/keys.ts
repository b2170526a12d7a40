/**
 * What both receipt signers share (signer.ts picks one): a key of the published set and the signer's
 * interface, a public key read as one (its `kid` the RFC 7638 thumbprint), and the digest KMS signs.
 */
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, importSPKI, type JWK } from 'jose';

export const RECEIPT_ALG = 'ES256';

/** One key of the set: its id and its public JWK (`kty`, `crv`, `x`, `y`). */
export interface ReceiptKey {
  kid: string;
  jwk: JWK;
}

export interface ReceiptSigner {
  /** The key that signs now. */
  current(): Promise<ReceiptKey>;
  /** Every key published: the current one first, then those that signed before a rotation. */
  keys(): Promise<ReceiptKey[]>;
  /** ES256 over the JWS signing input with the current key: JOSE's raw r‖s (64 bytes). */
  sign(signingInput: Uint8Array): Promise<Uint8Array>;
}

/** A public key (SPKI DER, what kms:GetPublicKey answers) as a key of the set. */
export async function receiptKeyOfSpki(spki: Uint8Array): Promise<ReceiptKey> {
  const pem = `-----BEGIN PUBLIC KEY-----\n${Buffer.from(spki).toString('base64')}\n-----END PUBLIC KEY-----`;
  const exported = await exportJWK(await importSPKI(pem, RECEIPT_ALG, { extractable: true }));
  const jwk: JWK = { kty: exported.kty, crv: exported.crv, x: exported.x, y: exported.y };
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256') throw new Error('a receipt key must be an EC P-256 key');
  return { kid: await calculateJwkThumbprint(jwk, 'sha256'), jwk };
}

/** SHA-256 of the signing input: what KMS signs (`MessageType: DIGEST`). */
export const digestOf = (input: Uint8Array): Uint8Array => createHash('sha256').update(input).digest();
