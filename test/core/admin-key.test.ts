import { config, resetForTests } from '../../functions/config';
import { ADMIN_KEY_REFRESH_MS, adminKey } from '../../functions/use-cases/admin-key';

/** Changes the key where admin-key.ts finds it, as a rotated secret would, without any reset. */
function keySourceBecomes(value: string | undefined): void {
  Object.assign(config(), { ADMIN_KEY: value });
}

describe('admin key', () => {
  beforeEach(() => resetForTests());
  afterEach(() => resetForTests());

  it('re-reads the configured key after the refresh interval, so a rotation takes effect', async () => {
    expect(await adminKey(0)).toBe('test-admin-key-0123456789');
    keySourceBecomes('rotated-admin-key-0123456789');
    expect(await adminKey(ADMIN_KEY_REFRESH_MS - 1)).toBe('test-admin-key-0123456789');
    expect(await adminKey(ADMIN_KEY_REFRESH_MS)).toBe('rotated-admin-key-0123456789');
  });

  it('fails loudly without any admin key and tries again on the next call', async () => {
    keySourceBecomes(undefined);
    await expect(adminKey(0)).rejects.toThrow('no admin key configured');
    keySourceBecomes('back-again-admin-key-012345');
    expect(await adminKey(1)).toBe('back-again-admin-key-012345');
  });

  it('forgets the cached key on resetForTests, so a new environment is read at once', async () => {
    expect(await adminKey(0)).toBe('test-admin-key-0123456789');
    const saved = process.env.ADMIN_KEY;
    process.env.ADMIN_KEY = 'from-the-new-environment-0123';
    try {
      resetForTests();
      expect(await adminKey(1)).toBe('from-the-new-environment-0123');
    } finally {
      process.env.ADMIN_KEY = saved;
    }
  });
});
