/** Signing secrets at rest, local mode (AES-256-GCM bound to owner and endpoint). */
import { randomBytes } from 'node:crypto';
import { resetForTests } from '../../functions/config';
import { openSecret, sealSecret } from '../../functions/store/events/webhook-secret';

beforeAll(() => {
  process.env.WEBHOOK_LOCAL_SECRET_KEY = randomBytes(32).toString('base64');
  resetForTests();
});

const ctx = { owner: 'agent#a01jhx3k6v1f8q2n7c9m4p5r6s7', webhookId: 'wh_01jhx3k6v1f8q2n7c9m4p5r6s7' };

describe('webhook secrets at rest', () => {
  it('stores a secret sealed, never in the clear, and opens it again', async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const sealed = await sealSecret(secret, ctx);
    expect(sealed).toMatch(/^aesgcm:/);
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(await openSecret(sealed, ctx)).toBe(secret);
  });

  it('does not open a sealed secret copied onto another endpoint or owner', async () => {
    const sealed = await sealSecret('whsec_abc', ctx);
    await expect(openSecret(sealed, { ...ctx, webhookId: 'wh_01jhx3k6v1f8q2n7c9m4p5r6s8' })).rejects.toThrow();
    await expect(openSecret(sealed, { ...ctx, owner: 'user#u01jhx3k6v1f8q2n7c9m4p5r6s7' })).rejects.toThrow();
  });
});
