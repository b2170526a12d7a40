/**
 * `npm run admin`: the operator's commands, run one of two ways. Table mode (the default) calls the
 * same use cases the admin API calls (admin-commands.ts) against the table the service is
 * configured with. API mode (`--api <baseUrl>`) sends each command to the admin API instead,
 * signed with SigV4 where the stage authorizes the admin routes with IAM, or with x-admin-key
 * (admin-api.ts). `runAdmin` is the whole CLI minus the process, so tests call it in-process;
 * bin/admin.ts only wires it to the terminal.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { type AdminRequest, ApiUsageError, adminApiTarget, amountBody, callAdminApi, creditBody, segment } from './admin-api';
import type { AdminIo, Answer } from './answer';
import { runKillSwitchBackfill } from './kill-switch-backfill';
import { openLocalChain } from './local-chain';
import { runRedispatch } from './redispatch';
import { returnEarnings } from './return-earnings';
import { NoTableError, openTable, TABLE_OPTIONS, TABLE_USAGE, type TableTarget } from './table-target';

export type { AdminIo } from './answer';

export const ADMIN_USAGE = `usage: npm run admin -- <command> [arguments] ${TABLE_USAGE}
       npm run admin -- <command> [arguments] --api <baseUrl> [--region <region>] [--admin-key <key>]

commands:
  create-user                            create a user; answers its id and user key (shown only once)
  credit <userId> <amount> <currency>    top up a user (currency USD or USDC)
         [--idempotency-key <key>]       the same key never credits twice; one is made up and printed when absent
  show-user <userId>                     a user's balances
  rotate-user-key <userId>               a new account key for a payer locked out (shown only once; the old key stops at once)
  enable-agent <agentId>                 let an agent charge users
  disable-agent <agentId>                stop an agent from charging users
  show-agent <agentId>                   an agent and its withdrawable balance
  list-agents [--pending | --enabled]    agents newest first: --pending those waiting to be enabled (or disabled),
         [--limit <n>] [--cursor <c>]    --enabled those that may charge; a page of --limit (1-100, default 20),
                                         the next from the answer's nextCursor
  show-charge <chargeId>                 any agent's charge
  held-payouts                           payouts held because their agent was disabled (oldest first)
  release-payout <agentId> <payoutId>    pay a held payout after all (even to a disabled agent)
  cancel-payout <agentId> <payoutId>     cancel a held payout: its gross, fee included, back to the agent
         [--idempotency-key <key>]       the same key never moves it twice; one is made up and printed when absent
  refund-charge <agentId> <chargeId> [amount]
                                         give a charge (all that is left, or amount) back to its payer
         [--idempotency-key <key>]       from the agent's earned balance, whether the agent is enabled or not
  return-earnings <agentId>              give every charge of a (disabled) agent back to its payers, as far as
                                         its balance goes; safe to run again (one key per charge)
  resolve-purchase <id>                  settle a signed x402 purchase the reconciler cannot reach (xp… or its c… id): the hot
                                         wallet's history searched without a limit, captured if its transfer is there, released
                                         if its blockhash is past at finalized without it (table mode; reads the chain)
  audit                                  check the ledger invariant over the whole table (run it while no money moves; table mode only)
  redispatch --from <ISO> --to <ISO>     send the webhook events of that time range through the dispatcher again (redispatch --help; table mode)
  kill-switch-backfill [--agent <id>]    copy agents' enabled flag to their balance shards (kill-switch-backfill --help; table mode)

Table mode (the default) works on the service's own table: TABLE_NAME, AWS_REGION and
DYNAMODB_ENDPOINT from the environment, or --table/--endpoint/--region; --local opens the data
\`npm start\` keeps in .data/ (stop npm start first). With none of them, the table of the
\`npm start\` running in this folder (in memory or not; PORT=<port> chooses when several run).

API mode (--api, the ApiUrl output or npm start's URL) calls the admin API. It signs each request
with SigV4 (service execute-api) using the standard AWS credential chain (AWS_PROFILE, SSO,
environment, instance role); the region comes from --region, else the API's hostname, else
AWS_REGION. With --admin-key (or ADMIN_KEY set) it sends x-admin-key instead, as npm start wants.

Answers are JSON on stdout. Refusals print "error: <message>" on stderr.
Exit codes: 0 done, 1 refused or failed, 2 usage error.`;

type Commands = typeof import('./admin-commands');

/** The list flags, as the admin API's query string (the CLI adds no meaning of its own). */
type ListFlags = { pending?: boolean | undefined; enabled?: boolean | undefined; limit?: string | undefined; cursor?: string | undefined };
const LIST_FLAGS = ['pending', 'enabled', 'limit', 'cursor'] as const;

interface CommandSpec {
  params: readonly string[];
  /** Trailing arguments that may be left out. */
  optional?: readonly string[];
  /** Takes an idempotency key (made up and printed when the operator gives none). */
  idempotent?: boolean;
  /** Takes the list flags (--pending, --enabled, --limit, --cursor). */
  lists?: boolean;
  /** Table mode: the use case, in-process. */
  run(commands: Commands, args: readonly string[], idempotencyKey: string | undefined, flags: ListFlags): Promise<Answer>;
  /** API mode: the admin API request the command is. Absent: table mode only (unless `flow`). */
  request?(args: readonly string[], idempotencyKey: string | undefined, flags: ListFlags): AdminRequest;
  /** API mode for a command that is several requests (a walk): `call` sends one and reads its answer. */
  flow?(call: (request: AdminRequest) => Promise<Answer>, args: readonly string[]): Promise<Answer>;
  /** Reads the chain: with --local, the one npm start keeps in .data/ (local-chain.ts). */
  chain?: boolean;
}

/** `GET /api/v1/admin/agents`'s query from the list flags: --pending is `enabled=false`. */
function agentListQuery(flags: ListFlags): Record<string, string> {
  return {
    ...(flags.pending ? { enabled: 'false' } : flags.enabled ? { enabled: 'true' } : {}),
    ...(flags.limit === undefined ? {} : { limit: flags.limit }),
    ...(flags.cursor === undefined ? {} : { cursor: flags.cursor }),
  };
}

const user = (userId = '') => `/api/v1/admin/users/${segment(userId)}`;
const agent = (agentId = '') => `/api/v1/admin/agents/${segment(agentId)}`;

const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  'create-user': {
    params: [],
    run: async (c) => c.answer(await c.createUserWithKey()),
    request: () => ({ method: 'POST', path: '/api/v1/admin/users' }),
  },
  credit: {
    params: ['userId', 'amount', 'currency'],
    idempotent: true,
    run: async (c, [userId = '', amount = '', currency = ''], key = '') => c.answer(await c.credit(userId, amount, currency, key)),
    request: ([userId, amount = '', currency = ''], key) => ({
      method: 'POST',
      path: `${user(userId)}/credits`,
      body: creditBody(amount, currency),
      ...(key === undefined ? {} : { idempotencyKey: key }),
    }),
  },
  'show-user': {
    params: ['userId'],
    run: async (c, [userId]) => c.answer(await c.readUser(userId)),
    request: ([userId]) => ({ method: 'GET', path: user(userId) }),
  },
  'rotate-user-key': {
    params: ['userId'],
    run: async (c, [userId]) => c.answer({ statusCode: 200, body: await c.rotateUserKeyByOperator(userId) }),
    request: ([userId]) => ({ method: 'POST', path: `${user(userId)}/keys/rotate` }),
  },
  'enable-agent': {
    params: ['agentId'],
    run: async (c, [agentId = '']) => c.answer(await c.enableAgent(agentId)),
    request: ([agentId]) => ({ method: 'PATCH', path: agent(agentId), body: '{"enabled":true}' }),
  },
  'disable-agent': {
    params: ['agentId'],
    run: async (c, [agentId = '']) => c.answer(await c.disableAgent(agentId)),
    request: ([agentId]) => ({ method: 'PATCH', path: agent(agentId), body: '{"enabled":false}' }),
  },
  'show-agent': {
    params: ['agentId'],
    run: async (c, [agentId = '']) => c.answer(await c.showAgent(agentId)),
    request: ([agentId]) => ({ method: 'GET', path: agent(agentId) }),
  },
  'list-agents': {
    params: [],
    lists: true,
    run: async (c, _args, _key, flags) => c.answer(await c.listAgents(agentListQuery(flags))),
    request: (_args, _key, flags) => {
      const query = new URLSearchParams(agentListQuery(flags)).toString();
      return { method: 'GET', path: `/api/v1/admin/agents${query ? `?${query}` : ''}` };
    },
  },
  'show-charge': {
    params: ['chargeId'],
    run: async (c, [chargeId = '']) => c.answer(await c.showCharge(chargeId)),
    request: ([chargeId = '']) => ({ method: 'GET', path: `/api/v1/admin/charges/${segment(chargeId)}` }),
  },
  // A disabled agent's money (docs/payouts.md "Held payouts", docs/lifecycle.md).
  'held-payouts': {
    params: [],
    run: async (c) => c.answer(await c.heldPayouts()),
    request: () => ({ method: 'GET', path: '/api/v1/admin/payouts?status=HELD&limit=100' }),
  },
  'release-payout': {
    params: ['agentId', 'payoutId'],
    run: async (c, [agentId = '', payoutId = '']) => c.answer(await c.releaseHeldPayout(agentId, payoutId)),
    request: ([agentId, payoutId = '']) => ({ method: 'POST', path: `${agent(agentId)}/payouts/${segment(payoutId)}/release` }),
  },
  'cancel-payout': {
    params: ['agentId', 'payoutId'],
    idempotent: true,
    run: async (c, [agentId = '', payoutId = ''], key = '') => c.answer(await c.cancelHeldPayout(agentId, payoutId, key)),
    request: ([agentId, payoutId = ''], key) => ({
      method: 'POST',
      path: `${agent(agentId)}/payouts/${segment(payoutId)}/cancel`,
      ...(key === undefined ? {} : { idempotencyKey: key }),
    }),
  },
  'refund-charge': {
    params: ['agentId', 'chargeId'],
    optional: ['amount'],
    idempotent: true,
    run: async (c, [agentId = '', chargeId = '', amount], key = '') => c.answer(await c.refundCharge(agentId, chargeId, amount, key)),
    request: ([agentId, chargeId = '', amount], key) => ({
      method: 'POST',
      path: `${agent(agentId)}/charges/${segment(chargeId)}/refund`,
      body: amount === undefined ? '{}' : amountBody(amount),
      ...(key === undefined ? {} : { idempotencyKey: key }),
    }),
  },
  'return-earnings': {
    params: ['agentId'],
    run: async (c, [agentId = '']) => c.returnEarnings(agentId),
    flow: (call, [agentId = '']) =>
      returnEarnings(agentId, {
        listCharges: (id, cursor) =>
          call({
            method: 'GET',
            path: `${agent(id)}/charges?limit=100${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
          }),
        refund: (id, chargeId, idempotencyKey) =>
          call({ method: 'POST', path: `${agent(id)}/charges/${segment(chargeId)}/refund`, body: '{}', idempotencyKey }),
      }),
  },
  // The search no run of the reconciler makes (docs/operating/runbooks.md "Purchases the reconciler cannot reach"): no API offers it.
  'resolve-purchase': {
    params: ['id'],
    chain: true,
    run: (c, [id = '']) => c.resolvePurchase(id),
  },
  // A scan of the whole table: no API offers it.
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
  'kill-switch-backfill': runKillSwitchBackfill,
};

class UsageError extends Error {}

/** A failure outside the API's answers, with its cause: fetch says only "fetch failed" and keeps the reason there. */
function describeFailure(error: unknown): string {
  // Read by shape: fetch's errors may come from another realm than this module's Error.
  const { cause } = (error ?? {}) as { cause?: { message?: unknown; code?: unknown } };
  const why = typeof cause?.message === 'string' && cause.message ? cause.message : typeof cause?.code === 'string' ? cause.code : '';
  return `${String(error)}${why ? ` (${why})` : ''}`;
}

function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: {
        ...TABLE_OPTIONS,
        'idempotency-key': { type: 'string' },
        pending: { type: 'boolean' },
        enabled: { type: 'boolean' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
        api: { type: 'string' },
        'admin-key': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Runs one admin command; resolves to the process exit code (0 done, 1 refused or failed, 2 usage). */
export async function runAdmin(argv: readonly string[], io: AdminIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
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
    const most = found.params.length + (found.optional?.length ?? 0);
    if (rest.length < found.params.length || rest.length > most) {
      const takes = [...found.params.map((p) => `<${p}>`), ...(found.optional ?? []).map((p) => `[${p}]`)];
      throw new UsageError(`${name} takes ${takes.length === 0 ? 'no arguments' : takes.join(' ')}`);
    }
    if (args.values['idempotency-key'] !== undefined && !found.idempotent) {
      const movers = Object.entries(COMMANDS).flatMap(([command, spec]) => (spec.idempotent ? [command] : []));
      throw new UsageError(`--idempotency-key is for ${movers.join(', ')} only`);
    }
    if (args.values['idempotency-key'] !== undefined && !found.idempotent) throw new UsageError('--idempotency-key is for credit only');
    const listFlag = LIST_FLAGS.find((flag) => args.values[flag] !== undefined);
    if (listFlag && !found.lists) throw new UsageError(`--${listFlag} is for list-agents only`);
    if (args.values.pending && args.values.enabled)
      throw new UsageError('--pending and --enabled do not mix: leave both out for every agent');
    if (args.values.api !== undefined) {
      const tableFlag = (['table', 'endpoint', 'local'] as const).find((flag) => args.values[flag] !== undefined);
      if (tableFlag) throw new UsageError(`--${tableFlag} is for table mode; --api calls the API instead`);
      if (!found.request && !found.flow) throw new UsageError(`${name} works on the table only (no API offers it): drop --api`);
    } else if (args.values['admin-key'] !== undefined) {
      throw new UsageError('--admin-key is for --api');
    }
    spec = found;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`error: ${error.message}\n${ADMIN_USAGE}`);
    return 2;
  }

  const params = args.positionals.slice(1);
  let idempotencyKey = args.values['idempotency-key'];
  if (spec.idempotent && idempotencyKey === undefined) {
    idempotencyKey = randomUUID();
    // Printed before the call: if the answer is lost, the same key retries without crediting twice.
    io.err(`idempotency key: ${idempotencyKey} (retry with --idempotency-key ${idempotencyKey})`);
  }
  const done = (answer: Answer): number => {
    io.out(answer.json);
    if (answer.failure === undefined) return 0;
    io.err(`error: ${answer.failure}`);
    return 1;
  };

  if (args.values.api !== undefined && (spec.request || spec.flow)) {
    let target: Awaited<ReturnType<typeof adminApiTarget>>;
    try {
      target = await adminApiTarget({ api: args.values.api, adminKey: args.values['admin-key'], region: args.values.region, env });
    } catch (error) {
      if (!(error instanceof ApiUsageError)) throw error;
      io.err(`error: ${error.message}\n${ADMIN_USAGE}`);
      return 2;
    }
    try {
      const call = (request: AdminRequest) => callAdminApi(target.baseUrl, target.credential, request);
      if (spec.flow) return done(await spec.flow(call, params));
      if (!spec.request) throw new Error(`${params.join(' ')}: no request`);
      return done(await call(spec.request(params, idempotencyKey, args.values)));
    } catch (error) {
      // Unreachable API, no credentials in the chain, a refused connection: the cause is the message.
      io.err(`error: ${describeFailure(error)}`);
      return 1;
    }
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
  let stopChain = async () => {};
  try {
    if (spec.chain && args.values.local) stopChain = await openLocalChain();
    // Loaded only now that the table is settled: the service's modules read configuration once.
    const commands = await import('./admin-commands');
    try {
      return done(await spec.run(commands, params, idempotencyKey, args.values));
    } catch (error) {
      io.err(`error: ${commands.describeError(error)}`);
      return 1;
    }
  } finally {
    await stopChain();
    await target.stop();
  }
}
