/**
 * `npm run audit`: proves the ledger invariant over the whole table (functions/audit/ledger-audit.ts)
 * and exits non-zero, naming the difference, when it does not hold. Run it while no money moves.
 *
 *   npm run audit -- --table <name> [--endpoint http://127.0.0.1:8000] [--region eu-west-1] [--segments 4] [--json]
 *   npm run audit -- --local            # the data `npm start` keeps in .data/ (stop `npm start` first)
 *
 * Without flags it reads TABLE_NAME, AWS_REGION and DYNAMODB_ENDPOINT from the environment; on
 * AWS it uses the usual credential chain and needs dynamodb:Scan on the table.
 * Exit codes: 0 holds, 1 does not hold, 2 could not run.
 */
import { parseArgs } from 'node:util';
import { NoTableError, openTable, TABLE_OPTIONS, TABLE_USAGE, type TableTarget } from './operator/table-target';

const USAGE = `usage: npm run audit -- ${TABLE_USAGE} [--segments <n>] [--json]`;

async function main(): Promise<number> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse();
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return 2;
  }
  if (args.values.help) {
    console.log(USAGE);
    return 0;
  }
  const segments = Number(args.values.segments ?? '1');
  if (!Number.isInteger(segments) || segments < 1 || segments > 64) {
    console.error(`--segments must be an integer from 1 to 64\n${USAGE}`);
    return 2;
  }

  let target: TableTarget;
  try {
    target = await openTable(args.values);
  } catch (error) {
    if (!(error instanceof NoTableError)) throw error;
    console.error(`${error.message}\n${USAGE}`);
    return 2;
  }

  try {
    // Imported after the environment is settled: the config module reads it once.
    const { formatAuditReport, runLedgerAudit } = await import('../functions/audit/ledger-audit');
    const report = await runLedgerAudit({ segments });
    if (args.values.json) console.log(JSON.stringify(report, null, 2));
    else console.log(formatAuditReport(report));
    if (!report.ok) console.error(`audit failed: ${report.problems[0] ?? 'unknown'}`);
    return report.ok ? 0 : 1;
  } catch (error) {
    console.error(`audit could not run: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    return 2;
  } finally {
    await target.stop();
  }
}

function parse() {
  return parseArgs({
    options: {
      ...TABLE_OPTIONS,
      segments: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
