import { join } from 'node:path';
import { type BenchOptions, DEFAULT_OUT_DIR, parseBenchArgs } from './args';

const ROOT = '/repo';
const DOCS = join(ROOT, 'docs');

function options(argv: string[]): BenchOptions {
  const parsed = parseBenchArgs(argv, ROOT);
  if (parsed.kind !== 'run') throw new Error(`expected a run, got ${JSON.stringify(parsed)}`);
  return parsed.options;
}

function refusal(argv: string[]): string {
  const parsed = parseBenchArgs(argv, ROOT);
  if (parsed.kind !== 'error') throw new Error(`expected a refusal, got ${JSON.stringify(parsed)}`);
  return parsed.message;
}

describe('bench arguments', () => {
  it('writes a full run to the git-ignored folder by default, not to docs/', () => {
    expect(options([])).toMatchObject({ quick: false, outDir: join(ROOT, DEFAULT_OUT_DIR), docs: false, write: true, loadSeconds: 60 });
  });

  it('writes a quick run to the git-ignored folder', () => {
    expect(options(['--quick'])).toMatchObject({ quick: true, outDir: join(ROOT, DEFAULT_OUT_DIR), docs: false, loadSeconds: 15 });
  });

  it('writes docs/ for a full run with --docs', () => {
    expect(options(['--docs'])).toMatchObject({ quick: false, outDir: DOCS, docs: true, write: true });
  });

  it('refuses --quick --docs in either order, saying why', () => {
    expect(refusal(['--quick', '--docs'])).toMatch(/--docs takes a full run/);
    expect(refusal(['--docs', '--quick', '--load', '0'])).toMatch(/--docs takes a full run/);
  });

  it('never lets a run reach docs/ through --out', () => {
    for (const dir of ['docs', './docs/', DOCS, 'bench-results/../docs']) {
      expect(refusal(['--quick', '--out', dir])).toMatch(/use --docs/);
      expect(refusal(['--out', dir])).toMatch(/use --docs/);
    }
  });

  it('takes --out relative to the project root or absolute', () => {
    expect(options(['--quick', '--out', 'tmp/bench']).outDir).toBe(join(ROOT, 'tmp/bench'));
    expect(options(['--out', '/tmp/bench']).outDir).toBe('/tmp/bench');
  });

  it('refuses --docs together with --out or --no-write', () => {
    expect(refusal(['--docs', '--out', 'x'])).toMatch(/either --docs or --out/);
    expect(refusal(['--docs', '--no-write'])).toMatch(/contradict/);
  });

  it('re-renders from the git-ignored folder, or from docs/ with --docs', () => {
    expect(options(['--render-only'])).toMatchObject({ renderOnly: true, outDir: join(ROOT, DEFAULT_OUT_DIR), docs: false });
    expect(options(['--render-only', '--docs'])).toMatchObject({ renderOnly: true, outDir: DOCS, docs: true });
    expect(refusal(['--render-only', '--docs', '--quick'])).toMatch(/--docs takes a full run/);
  });

  it('writes nothing with --no-write', () => {
    expect(options(['--quick', '--no-write'])).toMatchObject({ write: false, docs: false });
  });

  it('refuses unknown options and non-integer numbers', () => {
    expect(refusal(['--doc'])).toMatch(/Unknown option/);
    expect(refusal(['--load', '1.5'])).toMatch(/whole numbers/);
    expect(refusal(['--concurrency', '0'])).toMatch(/whole numbers/);
  });

  it('answers --help', () => {
    expect(parseBenchArgs(['-h'], ROOT)).toEqual({ kind: 'help' });
  });
});
