/**
 * The ready-to-run examples (docs/examples/*.mjs, issue 38: the README's purchase.mjs, saved as
 * told, broke `npm run lint`): each passes Biome as the repository lints it, and each page that
 * shows one shows it exactly as the file is (a ```js block whose first line names the file).
 * test/docs/examples.e2e.test.ts runs them.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const EXAMPLES = readdirSync(join(ROOT, 'docs', 'examples')).filter((f) => f.endsWith('.mjs'));
const PAGES = ['README.md', 'docs/x402.md'];
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** Every ```js block of `page` that names an example on its first line: the example's path → the block. */
function shown(page: string): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const [, body = ''] of read(page).matchAll(/```js\n([\s\S]*?)```/g)) {
    const named = /^\/\/ (docs\/examples\/[\w-]+\.mjs):/.exec(body);
    if (named?.[1]) blocks.set(named[1], body);
  }
  return blocks;
}

describe('docs/examples', () => {
  it('are purchase, seller and buyer, each naming itself on its first line', () => {
    expect(EXAMPLES.sort()).toEqual(['buyer.mjs', 'purchase.mjs', 'seller.mjs']);
    for (const file of EXAMPLES) expect(read(`docs/examples/${file}`).startsWith(`// docs/examples/${file}: `)).toBe(true);
  });

  it('pass `npm run lint` (Biome, the repository configuration)', () => {
    const biome = join(ROOT, 'node_modules', '.bin', 'biome');
    expect(() => execFileSync(biome, ['check', 'docs/examples'], { cwd: ROOT, stdio: 'pipe' })).not.toThrow();
  });

  it('are shown on their pages exactly as they are, and every one is shown', () => {
    const everywhere = new Map(PAGES.flatMap((page) => [...shown(page)]));
    for (const file of EXAMPLES) {
      const path = `docs/examples/${file}`;
      expect([path, everywhere.get(path)]).toEqual([path, read(path)]);
    }
    expect(read('README.md')).toContain('node docs/examples/purchase.mjs');
    expect(read('docs/x402.md')).toContain('node docs/examples/buyer.mjs');
  });
});
