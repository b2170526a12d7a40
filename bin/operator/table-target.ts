/**
 * Which table an operator tool (`npm run audit`, `npm run admin`) works on. Both read the same
 * configuration as the service (TABLE_NAME, AWS_REGION, DYNAMODB_ENDPOINT); these flags override
 * it, and `--local` opens the data `npm start` keeps in .data/. With no table named anywhere, the
 * table of the `npm start` running in this folder (bin/local/running.ts; PORT chooses among several),
 * in memory or not. The service's config module reads the environment once, so the flags are applied
 * before anything reads it, and it is re-read after.
 */
import { PROJECT_ROOT, startDynamoDbLocal } from '../local/dynamodb-local';
import { chooseRunningStack, NoRunningStackError, type RunningStack } from '../local/running';

/** The table `npm start` creates in its DynamoDB Local. */
export const LOCAL_TABLE = 'agent-payments-local';

/** parseArgs options shared by the operator tools. */
export const TABLE_OPTIONS = {
  table: { type: 'string' },
  endpoint: { type: 'string' },
  region: { type: 'string' },
  local: { type: 'boolean' },
} as const;

export const TABLE_USAGE = '[--table <name>] [--endpoint <url>] [--region <region>] [--local]';

export interface TableFlags {
  table?: string | undefined;
  endpoint?: string | undefined;
  region?: string | undefined;
  local?: boolean | undefined;
}

/** A table to work on, and how to let go of it. */
export interface TableTarget {
  stop(): Promise<void>;
  /** The running `npm start` whose table this is, when no table was named. */
  running?: RunningStack;
}

/** The operator named no table, and none could be chosen: a usage error saying what to do. */
export class NoTableError extends Error {
  constructor(message = 'no table: pass --table or --local, or set TABLE_NAME') {
    super(message);
    this.name = 'NoTableError';
  }
}

/**
 * Applies the flags to the environment (starting DynamoDB Local over .data/ for `--local`) and
 * makes the service's config and DynamoDB client read it afresh. With nothing named at all (no
 * flag, no TABLE_NAME), the running `npm start`'s table. Throws NoTableError when no table is named
 * and none runs (or several do, and PORT does not choose).
 */
export async function openTable(flags: TableFlags): Promise<TableTarget> {
  let stop = async () => {};
  const named = flags.local || flags.table !== undefined || flags.endpoint !== undefined || flags.region !== undefined;
  if (!named && !process.env.TABLE_NAME) return openRunning();
  if (flags.local) {
    // The same data directory `npm start` uses; DynamoDB Local must not have it open twice.
    const dynamo = await startDynamoDbLocal({ inMemory: false, dataDir: `${PROJECT_ROOT}/.data/dynamodb` });
    stop = () => dynamo.stop();
    Object.assign(process.env, { DYNAMODB_ENDPOINT: dynamo.endpoint, LOCAL: '1', TABLE_NAME: flags.table ?? LOCAL_TABLE });
  }
  if (flags.table !== undefined) process.env.TABLE_NAME = flags.table;
  if (flags.endpoint !== undefined) Object.assign(process.env, { DYNAMODB_ENDPOINT: flags.endpoint, LOCAL: '1' });
  if (flags.region !== undefined) process.env.AWS_REGION = flags.region;
  if (!process.env.TABLE_NAME) {
    await stop();
    throw new NoTableError();
  }
  process.env.LOG_LEVEL ??= 'SILENT';
  if (named) {
    // Imported only now: a caller that already read the configuration (a test) must re-read it.
    const { resetForTests } = await import('../../functions/config');
    resetForTests();
  }
  return { stop };
}

/** The table of the `npm start` running here (PORT, when set, says which one): its own DynamoDB Local. */
async function openRunning(): Promise<TableTarget> {
  const port = process.env.PORT === undefined || process.env.PORT === '' ? undefined : Number(process.env.PORT);
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) {
    throw new NoTableError(`no table: PORT must be the port npm start runs on, got ${process.env.PORT}`);
  }
  let running: RunningStack;
  try {
    running = chooseRunningStack(port);
  } catch (error) {
    if (error instanceof NoRunningStackError) throw new NoTableError(error.message);
    throw error;
  }
  Object.assign(process.env, { DYNAMODB_ENDPOINT: running.dynamoEndpoint, LOCAL: '1', TABLE_NAME: running.tableName });
  process.env.LOG_LEVEL ??= 'SILENT';
  const { resetForTests } = await import('../../functions/config');
  resetForTests();
  return { stop: async () => {}, running };
}
