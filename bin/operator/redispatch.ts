/**
 * `npm run admin -- redispatch --from <ISO> --to <ISO>`: the webhook outbox items created in
 * [from, to) go through the stream dispatcher's code again (functions/webhooks/redispatch.ts), onto
 * the delivery queue. For a stream batch the dispatcher gave up on (a message in the stream
 * on-failure queue names its time range) or any suspected gap; events already delivered to an
 * endpoint are not delivered to it again, so the range may be generous (docs/operating/runbooks.md, "Webhooks").
 *
 * Its own file and its own flags: admin-cli.ts only hands it the arguments after the command name.
 */
import { parseArgs } from 'node:util';
import type { AdminIo } from './answer';
import { NoTableError, openTable, TABLE_OPTIONS, TABLE_USAGE } from './table-target';

export const REDISPATCH_USAGE = `usage: npm run admin -- redispatch --from <ISO time> --to <ISO time> [--queue-url <url>] [--segments <n>] [--dry-run] ${TABLE_USAGE}

Re-dispatches the webhook outbox items created in [from, to) (at most 7 days back: outbox items
expire) through the dispatcher onto the delivery queue: one message per endpoint subscribed then.
An event already delivered to an endpoint is not delivered again, so overlapping ranges are safe.
agent.enabled/disabled events are not in the outbox and cannot be re-dispatched.

  --from, --to    ISO 8601 times, e.g. 2026-05-01T10:00:00Z (from inclusive, to exclusive)
  --queue-url     the delivery queue (the stack output WebhookQueueUrl); default WEBHOOK_QUEUE_URL
  --segments      parallel Scan segments, 1-16 (default 1): the Scan reads the whole table
  --dry-run       count the items, events and messages; send nothing

Needs dynamodb:Scan and dynamodb:Query on the table and sqs:SendMessage on the queue.
Answers JSON {from, to, dryRun, scanned, outboxItems, events, messages, failed?}.
Exit codes: 0 done, 1 stopped at an item it could not dispatch (run it again), 2 usage error.`;

class UsageError extends Error {}

function parse(argv: readonly string[]) {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      ...TABLE_OPTIONS,
      from: { type: 'string' },
      to: { type: 'string' },
      'queue-url': { type: 'string' },
      segments: { type: 'string' },
      'dry-run': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return { help: true as const };
  const time = (name: 'from' | 'to'): Date => {
    const text = values[name];
    if (text === undefined) throw new UsageError(`--${name} is required`);
    // A date with a time and a zone: "10:00" without one would silently mean the machine's zone.
    const at = new Date(text);
    if (!/T\d\d:\d\d/.test(text) || !/(Z|[+-]\d\d:?\d\d)$/i.test(text) || Number.isNaN(at.getTime())) {
      throw new UsageError(`--${name} must be an ISO 8601 time with a zone, e.g. 2026-05-01T10:00:00Z (got "${text}")`);
    }
    return at;
  };
  const from = time('from');
  const to = time('to');
  if (from.getTime() >= to.getTime()) throw new UsageError('--from must be before --to');
  const segments = Number(values.segments ?? '1');
  if (!Number.isInteger(segments) || segments < 1 || segments > 16) throw new UsageError('--segments must be an integer from 1 to 16');
  return { help: false as const, values, from, to, segments, dryRun: values['dry-run'] ?? false, queueUrl: values['queue-url'] };
}

/** Runs the command; resolves to the exit code (0 done, 1 stopped at an item, 2 usage). */
export async function runRedispatch(argv: readonly string[], io: AdminIo): Promise<number> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse(argv);
  } catch (error) {
    io.err(`error: ${error instanceof Error ? error.message : String(error)}\n${REDISPATCH_USAGE}`);
    return 2;
  }
  if (args.help) {
    io.out(REDISPATCH_USAGE);
    return 0;
  }
  if (args.queueUrl !== undefined) process.env.WEBHOOK_QUEUE_URL = args.queueUrl;
  if (!args.dryRun && !process.env.WEBHOOK_QUEUE_URL) {
    io.err(`error: no delivery queue: pass --queue-url (the stack output WebhookQueueUrl) or set WEBHOOK_QUEUE_URL\n${REDISPATCH_USAGE}`);
    return 2;
  }

  let target: Awaited<ReturnType<typeof openTable>>;
  try {
    target = await openTable(args.values);
  } catch (error) {
    if (error instanceof NoTableError) {
      io.err(`error: ${error.message}\n${REDISPATCH_USAGE}`);
      return 2;
    }
    io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  try {
    // Loaded only now that the environment is settled: the service's modules read configuration once.
    const { resetForTests } = await import('../../functions/config');
    resetForTests();
    const { redispatchOutbox } = await import('../../functions/webhooks/redispatch');
    const report = await redispatchOutbox({ from: args.from, to: args.to, segments: args.segments, dryRun: args.dryRun });
    io.out(JSON.stringify(report, null, 2));
    if (!report.failed) return 0;
    io.err(
      `error: stopped at ${report.failed.outboxKey} (created ${report.failed.createdAt}): ${report.failed.error}; running again is safe`,
    );
    return 1;
  } catch (error) {
    io.err(`error: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    return 1;
  } finally {
    await target.stop();
  }
}
