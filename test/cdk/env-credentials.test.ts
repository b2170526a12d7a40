/** The credentials provider the Lambda bundles use in place of the SDK's default chain. */
import { credentialsTreatedAsExpired, credentialsWillNeedRefresh, defaultProvider } from '../../lib/shims/env-credentials';

const KEYS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_CREDENTIAL_EXPIRATION'] as const;

describe('environment credentials (Lambda bundles)', () => {
  const saved = Object.fromEntries(KEYS.map((k) => [k, process.env[k]]));
  afterEach(() => {
    for (const k of KEYS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });

  it("returns the role's credentials Lambda puts in the environment", async () => {
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'token' });
    delete process.env.AWS_CREDENTIAL_EXPIRATION;
    await expect(defaultProvider()()).resolves.toEqual({ accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: 'token' });
  });

  it('fails plainly, without guessing elsewhere, when they are missing', async () => {
    for (const k of KEYS) delete process.env[k];
    await expect(defaultProvider()()).rejects.toThrow(/no AWS credentials in the environment/);
  });

  it('treats credentials with an expiration like the SDK does (refresh 5 minutes early)', () => {
    expect(credentialsWillNeedRefresh({})).toBe(false);
    expect(credentialsWillNeedRefresh({ expiration: new Date(Date.now() + 3_600_000) })).toBe(true);
    expect(credentialsTreatedAsExpired({ expiration: new Date(Date.now() + 60_000) })).toBe(true);
    expect(credentialsTreatedAsExpired({ expiration: new Date(Date.now() + 3_600_000) })).toBe(false);
  });
});
