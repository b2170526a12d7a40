/** The console's bundled scripts are the build of their sources (bin/console-assets.ts): stale → run it again. */
import { bundleConsoleScript, bundlePasskeyScript } from '../../bin/console-assets';
import { CONSOLE_SCRIPT, PASSKEY_SCRIPT } from '../../functions/console/assets.generated';

it('is the current bundle of functions/console/browser/passkey.js (npx tsx bin/console-assets.ts)', async () => {
  expect(await bundlePasskeyScript()).toBe(PASSKEY_SCRIPT);
});

it('is the current bundle of functions/console/browser/console.js (npx tsx bin/console-assets.ts)', async () => {
  expect(await bundleConsoleScript()).toBe(CONSOLE_SCRIPT);
});
