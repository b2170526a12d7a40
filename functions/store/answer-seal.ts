/**
 * Stored idempotent answers that hold a secret, sealed at rest (docs/idempotency.md "Answers that
 * hold a secret"). Registration's agent key, the operator's new user key, a grant key and a webhook
 * signing secret are shown once; a replay of a lost answer must show them again, so the record keeps
 * the answer, but only sealed, with a key the table does not hold, and only for the replay window.
 *
 * Envelope encryption, AES-256-GCM (node:crypto):
 * - a fresh 256-bit data key per attempt: on AWS from KMS `GenerateDataKey` under the stage's key
 *   (IDEMPOTENCY_KMS_KEY_ID), its wrapped copy stored beside the answer and unwrapped by KMS
 *   `Decrypt` on a replay; locally a random key wrapped with AES-256-GCM under the local key
 *   (IDEMPOTENCY_LOCAL_SECRET_KEY, `npm start` keeps it in .data/idempotency-secret-key). Both
 *   bound to the record (KMS encryption context / associated data: this service, this purpose,
 *   a hash of the record's scope and key), and the KMS grant is pinned to that context;
 * - the answer's own key is HKDF-SHA256 of the data key over the scope, the Idempotency-Key itself
 *   (never stored: the record's key is its hash) and the request's fingerprint, so a sealed answer
 *   opens only for the request that made it: the table plus the sealing key are not enough;
 * - the expiry (the record's TTL) is part of the sealed header, authenticated: past it the answer is
 *   never opened, whatever the item's TTL attribute says, and DynamoDB's TTL deletes the item.
 *
 * Format: `seal1.<expiresAt>.<wrapped data key>.<salt>.<iv>.<tag>.<ciphertext>` (base64url parts;
 * the wrapped key `kms:<blob>` or `local:<iv|tag|blob>`). Sizes: an answer of a few hundred bytes
 * seals to about twice that.
 */
import { createCipheriv, createDecipheriv, hash, hkdfSync, randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { config, onConfigReset } from '../config';
import { ANSWER_SEAL_PURPOSE, type AnswerSeal, type SealContext } from '../core/idempotency';

const VERSION = 'seal1';
const SERVICE = 'agent-payment-service';
const KMS_PREFIX = 'kms:';
const LOCAL_PREFIX = 'local:';

let kms: KMSClient | undefined;

function kmsClient(): KMSClient {
  kms ??= new KMSClient({ region: config().AWS_REGION, maxAttempts: 3 });
  return kms;
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const unb64 = (text: string) => Buffer.from(text, 'base64url');

/** Names the record without its key: what KMS's context (logged by CloudTrail) and the local wrap carry. */
const recordName = (context: SealContext) => hash('sha256', `${context.scope}\0${context.key}`, 'hex');

const encryptionContext = (context: SealContext) => ({ service: SERVICE, purpose: ANSWER_SEAL_PURPOSE, record: recordName(context) });
const wrapAad = (context: SealContext) => Buffer.from(`${SERVICE}|${ANSWER_SEAL_PURPOSE}|${recordName(context)}`, 'utf8');

function localKey(): Buffer {
  const key = config().IDEMPOTENCY_LOCAL_SECRET_KEY;
  if (!key) throw new Error('neither IDEMPOTENCY_KMS_KEY_ID nor IDEMPOTENCY_LOCAL_SECRET_KEY is configured');
  return Buffer.from(key, 'base64');
}

function gcmSeal(key: Buffer, plaintext: Buffer, aad: Buffer): { iv: Buffer; tag: Buffer; body: Buffer } {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), body };
}

function gcmOpen(key: Buffer, parts: { iv: Buffer; tag: Buffer; body: Buffer }, aad: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, parts.iv);
  decipher.setAAD(aad);
  decipher.setAuthTag(parts.tag);
  return Buffer.concat([decipher.update(parts.body), decipher.final()]);
}

/** A fresh data key and its wrapped form (KMS on AWS, the local key otherwise). */
async function newDataKey(context: SealContext): Promise<{ dataKey: Buffer; wrapped: string }> {
  const keyId = config().IDEMPOTENCY_KMS_KEY_ID;
  if (keyId) {
    const out = await kmsClient().send(
      new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: encryptionContext(context) }),
    );
    if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS returned no data key');
    return { dataKey: Buffer.from(out.Plaintext), wrapped: KMS_PREFIX + b64(out.CiphertextBlob) };
  }
  const dataKey = randomBytes(32);
  const { iv, tag, body } = gcmSeal(localKey(), dataKey, wrapAad(context));
  return { dataKey, wrapped: LOCAL_PREFIX + b64(Buffer.concat([iv, tag, body])) };
}

async function unwrapDataKey(wrapped: string, context: SealContext): Promise<Buffer> {
  if (wrapped.startsWith(KMS_PREFIX)) {
    const keyId = config().IDEMPOTENCY_KMS_KEY_ID;
    if (!keyId) throw new Error('a KMS-sealed answer, and no IDEMPOTENCY_KMS_KEY_ID');
    const out = await kmsClient().send(
      new DecryptCommand({
        KeyId: keyId,
        CiphertextBlob: unb64(wrapped.slice(KMS_PREFIX.length)),
        EncryptionContext: encryptionContext(context),
      }),
    );
    if (!out.Plaintext) throw new Error('KMS returned no plaintext');
    return Buffer.from(out.Plaintext);
  }
  if (wrapped.startsWith(LOCAL_PREFIX)) {
    const raw = unb64(wrapped.slice(LOCAL_PREFIX.length));
    return gcmOpen(localKey(), { iv: raw.subarray(0, 12), tag: raw.subarray(12, 28), body: raw.subarray(28) }, wrapAad(context));
  }
  throw new Error('unknown wrapped data key');
}

/** The answer's own key: the data key, bound to the scope, the Idempotency-Key, the request and the expiry. */
function answerKey(dataKey: Buffer, salt: Buffer, context: SealContext, expiresAt: number): Buffer {
  const info = hash('sha256', [VERSION, context.scope, context.key, context.fingerprint, String(expiresAt)].join('\0'), 'buffer');
  return Buffer.from(hkdfSync('sha256', dataKey, salt, info, 32));
}

export const answerSeal: AnswerSeal = {
  async sealer(context, expiresAt) {
    if (!Number.isSafeInteger(expiresAt)) throw new Error('a sealed answer needs a whole-second expiry');
    const { dataKey, wrapped } = await newDataKey(context);
    const header = `${VERSION}.${expiresAt}.${wrapped}`;
    return (plaintext) => {
      const salt = randomBytes(16);
      const { iv, tag, body } = gcmSeal(answerKey(dataKey, salt, context, expiresAt), Buffer.from(plaintext, 'utf8'), Buffer.from(header));
      return [header, b64(salt), b64(iv), b64(tag), b64(body)].join('.');
    };
  },

  async open(sealed, context, now) {
    const parts = sealed.split('.');
    const [version, expiry, wrapped, salt, iv, tag, body] = parts;
    if (parts.length !== 7 || version !== VERSION || !expiry || !wrapped || !salt || !iv || !tag || body === undefined) {
      throw new Error('not a sealed answer');
    }
    const expiresAt = Number(expiry);
    // The window is over (as the record's TTL counts it: expired once past it): the answer is not
    // opened again, as if the record were gone.
    if (!(Math.floor(now.getTime() / 1000) <= expiresAt)) return undefined;
    const dataKey = await unwrapDataKey(wrapped, context);
    try {
      const header = Buffer.from(`${VERSION}.${expiry}.${wrapped}`);
      const key = answerKey(dataKey, unb64(salt), context, expiresAt);
      return gcmOpen(key, { iv: unb64(iv), tag: unb64(tag), body: unb64(body) }, header).toString('utf8');
    } finally {
      dataKey.fill(0);
    }
  },
};

onConfigReset(() => {
  kms?.destroy();
  kms = undefined;
});
