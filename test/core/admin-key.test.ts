import { resetConfig } from '../../functions/config';
import { ADMIN_KEY_REFRESH_MS, adminKey, resetAdminKey } from '../../functions/use-cases/admin-key';

describe('admin key', () => {
  afterEach(() => {
    process.env.ADMIN_KEY = 'test-admin-key-0123456789';
    resetConfig();
    resetAdminKey();
  });

  it('re-reads the configured key after the refresh interval, so a rotation takes effect', async () => {
    resetAdminKey();
    expect(await adminKey(0)).toBe('test-admin-key-0123456789');
    process.env.ADMIN_KEY = 'rotated-admin-key-0123456789';
    resetConfig();
    expect(await adminKey(ADMIN_KEY_REFRESH_MS - 1)).toBe('test-admin-key-0123456789');
    expect(await adminKey(ADMIN_KEY_REFRESH_MS)).toBe('rotated-admin-key-0123456789');
  });

  it('fails loudly without any admin key and tries again on the next call', async () => {
    resetAdminKey();
    delete process.env.ADMIN_KEY;
    resetConfig();
    await expect(adminKey(0)).rejects.toThrow('no admin key configured');
    process.env.ADMIN_KEY = 'back-again-admin-key-012345';
    resetConfig();
    expect(await adminKey(1)).toBe('back-again-admin-key-012345');
  });
});
