/**
 * Sealed idempotent answers (functions/store/answer-seal.ts, docs/idempotency.md "Answers that hold
 * a secret"): AES-256-GCM under a data key from KMS (GenerateDataKey, Decrypt) or wrapped by the
 * local key; the answer opens only for its scope, Idempotency-Key and request, never past its
 * expiry, and not at all once a byte changed.
 */
import { randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { resetForTests } from '../../functions/config';
import { answerSeal } from '../../functions/store/answer-seal';

const context = { scope: 'u01jhx3k6v1f8q2n7c9m4p5r6s7#grants', key: '5b0c7d1e-0000-4000-8000-000000000001', fingerprint: 'ab'.repeat(32) };
const ANSWER = '{"id":"g01","key":"ug_live_3Jc7QxWbR5tKp9ZsL3vC8mYdE4gF6jA1uBo"}';
const saved = { ...process.env };
const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

afterEach(() => {
  process.env = { ...saved };
  resetForTests();
  jest.restoreAllMocks();
});

describe('with the local key', () => {
  beforeEach(() => {
    process.env.IDEMPOTENCY_LOCAL_SECRET_KEY = randomBytes(32).toString('base64');
    delete process.env.IDEMPOTENCY_KMS_KEY_ID;
    resetForTests();
  });

  async function sealed(now = new Date(), ttl = 86_400) {
    return (await answerSeal.sealer(context, seconds(now) + ttl))(ANSWER);
  }

  it('opens what it sealed, and holds nothing of the answer or the key in clear', async () => {
    const text = await sealed();
    expect(text).toMatch(/^seal1\.\d+\.local:/);
    expect(text).not.toContain('ug_live_');
    expect(text).not.toContain(context.key);
    expect(await answerSeal.open(text, context, new Date())).toBe(ANSWER);
  });

  it('seals the same answer differently each time (a fresh data key, salt and IV)', async () => {
    expect(await sealed()).not.toBe(await sealed());
  });

  it('opens only for the same scope, Idempotency-Key and request', async () => {
    const text = await sealed();
    for (const other of [
      { ...context, scope: 'u01other#grants' },
      { ...context, key: `${context.key}x` },
      { ...context, fingerprint: 'cd'.repeat(32) },
    ]) {
      await expect(answerSeal.open(text, other, new Date())).rejects.toThrow();
    }
  });

  it('never opens past its expiry, and its expiry cannot be moved', async () => {
    const now = new Date();
    const text = await sealed(now, 60);
    const end = seconds(now) + 60;
    expect(await answerSeal.open(text, context, new Date(end * 1000 + 999))).toBe(ANSWER);
    expect(await answerSeal.open(text, context, new Date((end + 1) * 1000))).toBeUndefined();
    // A later expiry written over the header fails the authentication (and so does any changed byte).
    const [version, expiry, ...rest] = text.split('.');
    const moved = [version, String(Number(expiry) + 86_400), ...rest].join('.');
    await expect(answerSeal.open(moved, context, new Date())).rejects.toThrow();
    const flipped = text.slice(0, -2) + (text.endsWith('A') ? 'B' : 'A') + text.slice(-1);
    await expect(answerSeal.open(flipped, context, new Date())).rejects.toThrow();
  });

  it('does not open under another local key (the key file is the secret the table does not hold)', async () => {
    const text = await sealed();
    process.env.IDEMPOTENCY_LOCAL_SECRET_KEY = randomBytes(32).toString('base64');
    resetForTests();
    await expect(answerSeal.open(text, context, new Date())).rejects.toThrow();
  });
});

describe('with KMS', () => {
  beforeEach(() => {
    process.env.IDEMPOTENCY_KMS_KEY_ID = 'arn:aws:kms:us-east-1:000000000000:key/00000000-0000-0000-0000-000000000000';
    delete process.env.IDEMPOTENCY_LOCAL_SECRET_KEY;
    resetForTests();
  });

  it('seals under a data key from GenerateDataKey and opens with Decrypt, both with the record’s encryption context', async () => {
    const dataKey = randomBytes(32);
    const wrapped = randomBytes(64);
    const sent: { name: string; input: Record<string, unknown> }[] = [];
    jest.spyOn(KMSClient.prototype, 'send').mockImplementation(async (command: unknown) => {
      if (command instanceof GenerateDataKeyCommand) {
        sent.push({ name: 'GenerateDataKey', input: command.input as unknown as Record<string, unknown> });
        return { Plaintext: Uint8Array.from(dataKey), CiphertextBlob: Uint8Array.from(wrapped) };
      }
      if (command instanceof DecryptCommand) {
        sent.push({ name: 'Decrypt', input: command.input as unknown as Record<string, unknown> });
        expect(Buffer.from(command.input.CiphertextBlob ?? new Uint8Array())).toEqual(wrapped);
        return { Plaintext: Uint8Array.from(dataKey) };
      }
      throw new Error('unexpected KMS command');
    });
    const text = (await answerSeal.sealer(context, seconds(new Date()) + 600))(ANSWER);
    expect(text).toMatch(/^seal1\.\d+\.kms:/);
    expect(await answerSeal.open(text, context, new Date())).toBe(ANSWER);

    expect(sent.map((s) => s.name)).toEqual(['GenerateDataKey', 'Decrypt']);
    for (const { input } of sent) {
      expect(input.KeyId).toBe(process.env.IDEMPOTENCY_KMS_KEY_ID);
      const ctx = input.EncryptionContext as Record<string, string>;
      expect(ctx.service).toBe('agent-payment-service');
      expect(ctx.purpose).toBe('idempotent-answer');
      // Names the record by a hash: never the Idempotency-Key (CloudTrail logs the context).
      expect(ctx.record).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(ctx)).not.toContain(context.key);
    }
    expect(sent[0]?.input.KeySpec).toBe('AES_256');
  });
});
