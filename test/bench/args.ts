/**
 * The bench's command line, parsed without side effects so a unit test can pin the one rule that
 * matters: a quick run never writes docs/. The committed figures come only from a full run asked
 * for with `--docs`; everything else goes to a git-ignored folder (`bench-results/` by default).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

export const USAGE =
  'usage: npm run bench -- [--quick] [--load <seconds>] [--concurrency <n>] [--out <dir> | --docs] [--no-write] [--render-only]';

/** Relative to the project root; listed in .gitignore. */
export const DEFAULT_OUT_DIR = 'bench-results';
export const DOCS_DIR = 'docs';

/**
 * Enough in flight to keep DynamoDB Local (which runs transactions one at a time) busy from both
 * paths on a 2-core machine; the sweep shows 1, 4 and 32 beside it.
 */
const DEFAULT_CONCURRENCY = 8;

export interface BenchOptions {
  quick: boolean;
  loadSeconds: number;
  concurrency: number;
  /** Absolute folder benchmarks.{json,md,svg} are written to (and, with renderOnly, read from). */
  outDir: string;
  /** outDir is docs/: the committed figures. */
  docs: boolean;
  write: boolean;
  renderOnly: boolean;
}

export type ParsedArgs = { kind: 'run'; options: BenchOptions } | { kind: 'help' } | { kind: 'error'; message: string };

export function parseBenchArgs(argv: string[], projectRoot: string): ParsedArgs {
  let values: {
    quick?: boolean;
    load?: string;
    concurrency?: string;
    out?: string;
    docs?: boolean;
    'no-write'?: boolean;
    'render-only'?: boolean;
    help?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        quick: { type: 'boolean' },
        load: { type: 'string' },
        concurrency: { type: 'string' },
        out: { type: 'string' },
        docs: { type: 'boolean' },
        'no-write': { type: 'boolean' },
        'render-only': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    return { kind: 'error', message: error instanceof Error ? error.message : String(error) };
  }
  if (values.help) return { kind: 'help' };
  const quick = values.quick === true;
  const docs = values.docs === true;
  const renderOnly = values['render-only'] === true;
  const write = values['no-write'] !== true;
  if (docs && quick) {
    return {
      kind: 'error',
      message:
        '--docs takes a full run: a quick run is shorter and noisier than the figures docs/benchmarks.* promise. ' +
        'Drop --quick (full run, about 10 minutes), or drop --docs to write the quick run to bench-results/.',
    };
  }
  if (docs && values.out !== undefined) return { kind: 'error', message: '--docs writes to docs/; give either --docs or --out, not both' };
  if (docs && !write) return { kind: 'error', message: '--docs and --no-write contradict each other' };
  if (renderOnly && !write) return { kind: 'error', message: '--render-only and --no-write contradict each other' };

  const loadSeconds = Number(values.load ?? (quick ? '15' : '60'));
  const concurrency = Number(values.concurrency ?? String(DEFAULT_CONCURRENCY));
  if (!Number.isInteger(loadSeconds) || loadSeconds < 0 || !Number.isInteger(concurrency) || concurrency < 1) {
    return { kind: 'error', message: '--load and --concurrency take whole numbers' };
  }
  const outDir = resolve(projectRoot, docs ? DOCS_DIR : (values.out ?? DEFAULT_OUT_DIR));
  // `--out docs` would be a back door around the rule above.
  if (!docs && outDir === resolve(projectRoot, DOCS_DIR)) return { kind: 'error', message: 'to write docs/, use --docs (full runs only)' };
  return { kind: 'run', options: { quick, loadSeconds, concurrency, outDir, docs, write, renderOnly } };
}
