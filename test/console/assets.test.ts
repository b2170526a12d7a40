/** The console's bundled passkey script is the build of its source (bin/console-assets.ts): stale → run it again. */
import { bundlePasskeyScript } from '../../bin/console-assets';
import { PASSKEY_SCRIPT } from '../../functions/console/assets.generated';

it('is the current bundle of functions/console/browser/passkey.js (npx tsx bin/console-assets.ts)', async () => {
  expect(await bundlePasskeyScript()).toBe(PASSKEY_SCRIPT);
});
