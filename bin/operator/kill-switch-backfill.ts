/**
 * `npm run admin -- kill-switch-backfill [--agent <agentId>]`: copies each agent item's `enabled`
 * and key hash to the agent's balance shards (functions/kill-switch/fanout.ts), the copy a charge
 * is conditioned on. Run once by the deploy that introduces it (agents that exist already have no
 * copy: their charges are refused until they get one), and for an agent named in a note of the
 * fan-out's failure queue (docs/operating/runbooks.md). Safe to run again, and while the service runs.
 */
import { parseArgs } from 'node:util';
import type { AdminIo } from './answer';
import { NoTableError, openTable, TABLE_OPTIONS, TABLE_USAGE } from './table-target';

export const KILL_SWITCH_BACKFILL_USAGE = `usage: npm run admin -- kill-switch-backfill [--agent <agentId>] ${TABLE_USAGE}

Copies every agent item's enabled flag and key hash to the agent's balance shards (or only the
agent named), from the agent item read again: safe to repeat and to run while the service runs.
Without --agent it scans the whole table.

Needs dynamodb:Scan (without --agent), Query on GSI1 (with it), GetItem on the agent items and
UpdateItem on the balance shards.
Answers JSON {agents, failed}. Exit codes: 0 done, 1 some agent failed (run it again), 2 usage error.`;

const parse = (argv: readonly string[]) =>
  parseArgs({
    args: [...argv],
    options: { ...TABLE_OPTIONS, agent: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: false,
  }).values;

export async function runKillSwitchBackfill(argv: readonly string[], io: AdminIo): Promise<number> {
  let values: ReturnType<typeof parse>;
  try {
    values = parse(argv);
  } catch (error) {
    io.err(`error: ${error instanceof Error ? error.message : String(error)}\n${KILL_SWITCH_BACKFILL_USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out(KILL_SWITCH_BACKFILL_USAGE);
    return 0;
  }
  let target: Awaited<ReturnType<typeof openTable>>;
  try {
    target = await openTable(values);
  } catch (error) {
    io.err(
      `error: ${error instanceof Error ? error.message : String(error)}${error instanceof NoTableError ? `\n${KILL_SWITCH_BACKFILL_USAGE}` : ''}`,
    );
    return error instanceof NoTableError ? 2 : 1;
  }
  try {
    // Loaded only now that the environment is settled: the service's modules read configuration once.
    const { resetForTests } = await import('../../functions/config');
    resetForTests();
    const { backfillKillSwitch } = await import('../../functions/kill-switch/fanout');
    const report = await backfillKillSwitch(values.agent === undefined ? {} : { agentId: values.agent });
    io.out(JSON.stringify(report, null, 2));
    return report.failed.length === 0 ? 0 : 1;
  } catch (error) {
    io.err(`error: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    return 1;
  } finally {
    await target.stop();
  }
}
