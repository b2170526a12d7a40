/**
 * The browser the page tests drive: the Chromium build shipped inside the npm package
 * `@sparticuz/chromium` (so `npm test` needs nothing outside npm), or a system Chromium when
 * `CHROMIUM_PATH` names one. Driven by playwright-core; JavaScript off by default, as the pages
 * must work without it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { type Browser, chromium } from 'playwright-core';

/**
 * Flags of the packaged build's defaults that would weaken what the page tests check: the
 * same-origin policy and mixed-content blocking. Everything else is kept as the package sets it.
 */
const WEAKENING_FLAGS = new Set(['--disable-web-security', '--allow-running-insecure-content']);

/**
 * The packaged build draws with SwiftShader, a GPU emulated on the CPU (it is made for Lambda,
 * which has no GPU). The tests check layout, accessibility and passkeys, none of which a GPU
 * changes; Chromium's own software compositor draws the same pages for less CPU (measured:
 * `npx jest test/browser`, 33 tests, 128 s of user time before, 112 s after).
 */
const SOFTWARE_GL_FLAGS = new Set([
  '--use-gl=angle',
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  '--in-process-gpu',
  '--ignore-gpu-blocklist',
]);

/** No background connections: this machine has no network and Chromium retries them at every start. */
const QUIET_FLAGS = ['--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/**
 * The packaged build's path (it unpacks itself into the temp folder on first use) and its flags.
 * Asked of a child node process: the package is ESM that finds its files by `import.meta.url`,
 * which Jest's CommonJS runtime cannot load.
 */
async function packagedChromium(): Promise<{ path: string; args: string[] }> {
  const script =
    "const { default: c } = await import('@sparticuz/chromium');" +
    'process.stdout.write(JSON.stringify({ path: await c.executablePath(), args: c.args }));';
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: __dirname });
  return JSON.parse(stdout) as { path: string; args: string[] };
}

export async function launchBrowser(): Promise<Browser> {
  const system = process.env.CHROMIUM_PATH;
  if (system) return chromium.launch({ executablePath: system, args: ['--no-sandbox', ...QUIET_FLAGS] });
  const packaged = await packagedChromium();
  const args = packaged.args.filter((flag) => !WEAKENING_FLAGS.has(flag) && !SOFTWARE_GL_FLAGS.has(flag));
  return chromium.launch({ executablePath: packaged.path, args: [...args, '--disable-gpu', ...QUIET_FLAGS] });
}
