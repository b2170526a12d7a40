/**
 * No branch on a currency literal outside functions/core/money.ts (docs/design.md §25, "rails by
 * registry"). What differs by currency is data: core/money.ts `CURRENCY_INFO` (minor-unit digits,
 * the rail, whether it is paid to a wallet address) or a rail's registration in
 * functions/rails/registry.ts. A `case 'USD'` or `=== 'USDC'` elsewhere welds a behaviour to one
 * currency again, and a second rail for it would have to find every such line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const FUNCTIONS = path.join(ROOT, 'functions');
const ALLOWED = path.join('functions', 'core', 'money.ts');

const CURRENCY = `(?:${['USD', 'USDC'].join('|')})`;
const QUOTED = `['"\`]${CURRENCY}['"\`]`;
/** `case 'USD'`, `x === 'USDC'`, `x !== 'USD'`, `'USDC' === x` (and `==`/`!=`). */
const BRANCH = new RegExp(`\\bcase\\s+${QUOTED}|[!=]==?\\s*${QUOTED}|${QUOTED}\\s*[!=]==?`);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Each `file:line: text` of `files` that branches on a currency literal. */
function currencyBranches(files: readonly { file: string; text: string }[]): string[] {
  return files.flatMap(({ file, text }) =>
    text.split('\n').flatMap((line, i) => (BRANCH.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe('currency branches', () => {
  it('no file of functions/ but core/money.ts branches on a currency literal', () => {
    const files = sourceFiles(FUNCTIONS)
      .map((full) => ({ file: path.relative(ROOT, full), text: readFileSync(full, 'utf8') }))
      .filter(({ file }) => file !== ALLOWED);
    expect(files.length).toBeGreaterThan(100);
    expect(currencyBranches(files)).toEqual([]);
  });

  it('finds such a branch when there is one (the check can fail)', () => {
    const made = (text: string) => currencyBranches([{ file: 'x.ts', text }]);
    expect(made("switch (c) {\n  case 'USDC':")).toEqual(["x.ts:2: case 'USDC':"]);
    expect(made("if (t.currency === 'USD') x();")).toHaveLength(1);
    expect(made('if (t.currency !== "USDC") x();')).toHaveLength(1);
    expect(made("if ('USDC' == currency) x();")).toHaveLength(1);
    // Naming a currency is not branching on it.
    expect(made("const c: Currency = 'USDC';\nformatAmount(m, 'USD');\nconst t = 'USDC (Solana)';")).toEqual([]);
  });
});
