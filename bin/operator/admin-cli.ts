/**
 * `npm run admin`: the operator's commands over the same use cases the admin API calls (see
 * admin-commands.ts), against the table the service is configured with. `runAdmin` is the whole
 * CLI minus the process, so tests call it in-process; bin/admin.ts only wires it to the terminal.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { runRedispatch } from './redispatch';
import { NoTableError, openTable, TABLE_OPTIONS, TABLE_USAGE, type TableTarget } from './table-target';

/** Where the CLI writes: stdout gets the JSON answer, stderr everything meant for the operator. */
export interface AdminIo {
  out(text: string): void;
  err(text: string): void;
}

export const ADMIN_USAGE = `usage: npm run admin -- <command> [arguments] ${TABLE_USAGE}

commands:
  create-user                            create a user; answers its id and user key (shown only once)
  credit <userId> <amount> <currency>    top up a user (currency USD or USDC)
         [--idempotency-key <key>]       the same key never credits twice; one is made up and printed when absent
  show-user <userId>                     a user's balances
  enable-agent <agentId>                 let an agent charge users
  disable-agent <agentId>                stop an agent from charging users
  show-agent <agentId>                   an agent and its withdrawable balance
  audit                                  check the ledger invariant over the whole table (run it while no money moves)
  redispatch --from <ISO> --to <ISO>     send the webhook events of that time range through the dispatcher again (redispatch --help)

The table is the service's own: TABLE_NAME, AWS_REGION and DYNAMODB_ENDPOINT from the environment,
or --table/--endpoint/--region; --local opens the data \`npm start\` keeps in .data/ (stop npm start first).

Answers are JSON on stdout. Refusals print "error: <message>" on stderr.
Exit codes: 0 done, 1 refused or failed, 2 usage error.`;

type Commands = typeof import('./admin-commands');
type Answer = import('./admin-commands').Answer;

interface CommandSpec {
  params: readonly string[];
  run(commands: Commands, args: readonly string[], flags: { idempotencyKey?: string | undefined }, io: AdminIo): Promise<Answer>;
}

const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  'create-user': { params: [], run: async (c) => c.answer(await c.createUserWithKey()) },
  credit: {
    params: ['userId', 'amount', 'currency'],
    run: async (c, [userId = '', amount = '', currency = ''], flags, io) => {
      let key = flags.idempotencyKey;
      if (key === undefined) {
        key = randomUUID();
        // Printed before the call: if the answer is lost, the same key retries without crediting twice.
        io.err(`idempotency key: ${key} (retry with --idempotency-key ${key})`);
      }
      return c.answer(await c.credit(userId, amount, currency, key));
    },
  },
  'show-user': { params: ['userId'], run: async (c, [userId]) => c.answer(await c.readUser(userId)) },
  'enable-agent': { params: ['agentId'], run: async (c, [agentId = '']) => c.answer(await c.enableAgent(agentId)) },
  'disable-agent': { params: ['agentId'], run: async (c, [agentId = '']) => c.answer(await c.disableAgent(agentId)) },
  'show-agent': { params: ['agentId'], run: async (c, [agentId = '']) => c.answer(await c.showAgent(agentId)) },
  audit: {
    params: [],
    run: async (c) => {
      const report = await c.runLedgerAudit();
      return { json: JSON.stringify(report, null, 2), ...(report.ok ? {} : { failure: `ledger audit failed: ${report.problems[0]}` }) };
    },
  },
};

/** Commands with flags of their own, each in its own file: they get the arguments after their name. */
const OWN_FLAGS: Readonly<Record<string, (argv: readonly string[], io: AdminIo) => Promise<number>>> = {
  redispatch: runRedispatch,
};

class UsageError extends Error {}

function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: { ...TABLE_OPTIONS, 'idempotency-key': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Runs one admin command; resolves to the process exit code (0 done, 1 refused or failed, 2 usage). */
export async function runAdmin(argv: readonly string[], io: AdminIo): Promise<number> {
  const own = OWN_FLAGS[argv[0] ?? ''];
  if (own) return own(argv.slice(1), io);
  let args: ReturnType<typeof parse>;
  let spec: CommandSpec;
  try {
    args = parse(argv);
    if (args.values.help || args.positionals[0] === 'help') {
      io.out(ADMIN_USAGE);
      return 0;
    }
    const [name, ...rest] = args.positionals;
    if (name === undefined) throw new UsageError('no command');
    const found = COMMANDS[name];
    if (!found) throw new UsageError(`unknown command: ${name}`);
    if (rest.length !== found.params.length) {
      throw new UsageError(`${name} takes ${found.params.length === 0 ? 'no arguments' : found.params.map((p) => `<${p}>`).join(' ')}`);
    }
    if (args.values['idempotency-key'] !== undefined && name !== 'credit') throw new UsageError('--idempotency-key is for credit only');
    spec = found;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`error: ${error.message}\n${ADMIN_USAGE}`);
    return 2;
  }

  let target: TableTarget;
  try {
    target = await openTable(args.values);
  } catch (error) {
    if (error instanceof NoTableError) {
      io.err(`error: ${error.message}\n${ADMIN_USAGE}`);
      return 2;
    }
    io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  try {
    // Loaded only now that the table is settled: the service's modules read configuration once.
    const commands = await import('./admin-commands');
    try {
      const answer = await spec.run(commands, args.positionals.slice(1), { idempotencyKey: args.values['idempotency-key'] }, io);
      io.out(answer.json);
      if (answer.failure === undefined) return 0;
      io.err(`error: ${answer.failure}`);
      return 1;
    } catch (error) {
      io.err(`error: ${commands.describeError(error)}`);
      return 1;
    }
  } finally {
    await target.stop();
  }
}
