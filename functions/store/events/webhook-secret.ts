/**
 * Webhook signing secrets at rest. A secret must be readable (to sign), so it is encrypted, not
 * hashed:
 * - AWS: KMS Encrypt/Decrypt under the stage's customer-managed key (WEBHOOK_KMS_KEY_ID) with an
 *   encryption context binding the ciphertext to its owner and webhook id, so a ciphertext copied
 *   onto another endpoint's item does not decrypt. Only the webhook-creating routes may Encrypt
 *   and only the delivery worker may Decrypt (lib/webhook-pipeline.ts), both pinned to that context key.
 * - Locally: AES-256-GCM under WEBHOOK_LOCAL_SECRET_KEY with the same context as associated data.
 * A secret never reaches a log line; a decrypted one is cached in the container for 5 minutes.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { config, configSlot, onConfigReset } from '../../config';
import { TtlCache } from '../../core/ttl-cache';

/** What a sealed secret is bound to. */
export interface SecretContext {
  owner: string;
  webhookId: string;
}

const KMS_PREFIX = 'kms:';
const LOCAL_PREFIX = 'aesgcm:';
const CACHE_MS = 5 * 60_000;

let kms: KMSClient | undefined;
/** Decrypted secrets, per configuration (configSlot): a function without the key never finds another's. */
const caches = configSlot<TtlCache<string>>();

function kmsClient(): KMSClient {
  kms ??= new KMSClient({ region: config().AWS_REGION, maxAttempts: 3 });
  return kms;
}

const encryptionContext = (ctx: SecretContext) => ({ service: 'agent-payment-service', owner: ctx.owner, webhookId: ctx.webhookId });
const aad = (ctx: SecretContext) => Buffer.from(`${ctx.owner}|${ctx.webhookId}`, 'utf8');

function localKey(): Buffer {
  const key = config().WEBHOOK_LOCAL_SECRET_KEY;
  if (!key) throw new Error('neither WEBHOOK_KMS_KEY_ID nor WEBHOOK_LOCAL_SECRET_KEY is configured');
  return Buffer.from(key, 'base64');
}

/** Encrypts a signing secret for storage. */
export async function sealSecret(secret: string, ctx: SecretContext): Promise<string> {
  const keyId = config().WEBHOOK_KMS_KEY_ID;
  if (keyId) {
    const out = await kmsClient().send(
      new EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from(secret, 'utf8'), EncryptionContext: encryptionContext(ctx) }),
    );
    if (!out.CiphertextBlob) throw new Error('KMS returned no ciphertext');
    return KMS_PREFIX + Buffer.from(out.CiphertextBlob).toString('base64');
  }
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', localKey(), iv);
  cipher.setAAD(aad(ctx));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return LOCAL_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

/** Decrypts a stored signing secret (cached per container). Throws when it was sealed for another context. */
export async function openSecret(sealed: string, ctx: SecretContext): Promise<string> {
  let cache = caches.get();
  if (!cache) {
    cache = new TtlCache<string>(CACHE_MS);
    caches.set(cache);
  }
  const cacheKey = `${ctx.owner}|${ctx.webhookId}|${sealed.slice(-24)}`;
  const hit = cache.get(cacheKey);
  if (hit !== undefined) return hit;
  let secret: string;
  if (sealed.startsWith(KMS_PREFIX)) {
    const out = await kmsClient().send(
      new DecryptCommand({
        CiphertextBlob: Buffer.from(sealed.slice(KMS_PREFIX.length), 'base64'),
        EncryptionContext: encryptionContext(ctx),
      }),
    );
    if (!out.Plaintext) throw new Error('KMS returned no plaintext');
    secret = Buffer.from(out.Plaintext).toString('utf8');
  } else if (sealed.startsWith(LOCAL_PREFIX)) {
    const raw = Buffer.from(sealed.slice(LOCAL_PREFIX.length), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', localKey(), raw.subarray(0, 12));
    decipher.setAAD(aad(ctx));
    decipher.setAuthTag(raw.subarray(12, 28));
    secret = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } else {
    throw new Error('unknown sealed secret format');
  }
  cache.set(cacheKey, secret);
  return secret;
}

onConfigReset(() => {
  kms?.destroy();
  kms = undefined;
});
