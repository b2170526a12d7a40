/**
 * Where `npm start` runs, for the operator tools to find it: `npm run audit` and `npm run admin`
 * with no table named use the table of the `npm start` running in this folder (DESIGN §24), its
 * in-memory one (IN_MEMORY=1) included, through its DynamoDB Local, with no need to stop it.
 *
 * Each running `npm start` writes `.data/running/<port>.json` once it serves, and removes it when
 * it stops; a record whose process is gone (killed) is ignored and removed by the next reader. The
 * record holds addresses only, no key.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './dynamodb-local';

export const RUNNING_DIR = join(PROJECT_ROOT, '.data', 'running');

export interface RunningStack {
  pid: number;
  port: number;
  /** The service's base URL. */
  url: string;
  inMemory: boolean;
  dynamoEndpoint: string;
  tableName: string;
  /** The chain stand-in and the service's wallets on it: what the audit reconciles. */
  solana: { url: string; mint: string; hotWallet: string; depositWallet: string; x402PayTo: string };
  startedAt: string;
}

const fileOf = (dir: string, port: number) => join(dir, `${port}.json`);

/** Records a running stack; the returned function removes the record (at stop). */
export function recordRunning(stack: RunningStack, dir = RUNNING_DIR): () => void {
  mkdirSync(dir, { recursive: true });
  const file = fileOf(dir, stack.port);
  writeFileSync(file, `${JSON.stringify(stack, null, 2)}\n`);
  return () => {
    // Only our own: a later stack on the same port may have written its record since.
    try {
      if ((JSON.parse(readFileSync(file, 'utf8')) as RunningStack).pid === stack.pid) rmSync(file, { force: true });
    } catch {
      // gone already
    }
  };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's process.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The stacks running in this folder now, by port; stale records (their process gone) are removed. */
export function runningStacks(dir = RUNNING_DIR): RunningStack[] {
  if (!existsSync(dir)) return [];
  const stacks: RunningStack[] = [];
  for (const name of readdirSync(dir).filter((f) => /^\d+\.json$/.test(f))) {
    const file = join(dir, name);
    let stack: RunningStack;
    try {
      stack = JSON.parse(readFileSync(file, 'utf8')) as RunningStack;
    } catch {
      continue;
    }
    if (alive(stack.pid)) stacks.push(stack);
    else rmSync(file, { force: true });
  }
  return stacks.sort((a, b) => a.port - b.port);
}

/** Why no single running stack could be chosen: the words the tools print. */
export class NoRunningStackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoRunningStackError';
  }
}

/**
 * The running stack to use: the one on `port` (PORT, as npm start reads it) when given, else the
 * only one. Throws NoRunningStackError saying what to do when there is none, or several.
 */
export function chooseRunningStack(port: number | undefined, dir = RUNNING_DIR): RunningStack {
  const stacks = runningStacks(dir);
  if (port !== undefined) {
    const found = stacks.find((s) => s.port === port);
    if (found) return found;
    throw new NoRunningStackError(
      `no table: npm start is not running on port ${port} in this folder. Run \`npm start\` first` +
        `${stacks.length > 0 ? ` (it runs on ${stacks.map((s) => s.port).join(', ')})` : ''}, or name a table (--table, --local, TABLE_NAME)`,
    );
  }
  const [only, ...others] = stacks;
  if (!only) {
    throw new NoRunningStackError(
      'no table: npm start is not running in this folder. Run `npm start` first (in another shell), ' +
        'or name a table: --local (the data npm start keeps in .data/, npm start stopped), --table, or TABLE_NAME',
    );
  }
  if (others.length > 0) {
    throw new NoRunningStackError(
      `no table: npm start runs on several ports here (${stacks.map((s) => s.port).join(', ')}): ` +
        'choose one with PORT (PORT=<port> npm run …), or name a table (--table with --endpoint)',
    );
  }
  return only;
}
