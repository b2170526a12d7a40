/**
 * `npm run audit`: proves the ledger invariant over the whole table (functions/audit/ledger-audit.ts)
 * and, when the configuration names a chain, reconciles the service's wallets with the ledger
 * transfer by transfer (functions/audit/chain-checks.ts: every USDC outflow a payout, every
 * on-chain credit an inflow of its amount, each credited once). Exits non-zero, naming what broke,
 * when either does not hold. Run it while no money moves.
 *
 *   npm run audit -- --table <name> [--endpoint http://127.0.0.1:8000] [--region eu-west-1] [--segments 4] [--json]
 *                    [--no-chain] [--operator-wallet <address> ...] [--chain-max-signatures <n>]
 *   npm run audit                        # the table and the chain of the `npm start` running in this folder
 *   npm run audit -- --local            # the data and the chain `npm start` keeps in .data/ (stop `npm start` first)
 *
 * Without flags it reads TABLE_NAME, AWS_REGION and DYNAMODB_ENDPOINT from the environment; with
 * none of them, it audits the running `npm start` (in memory or not; PORT chooses when several run)
 * and reconciles its chain stand-in. On AWS it uses the usual credential chain and needs dynamodb:Scan on the table. The wallets are the
 * service's own configuration: USDC_MINT, SOLANA_RPC_URL (or SOLANA_RPC_URL_SECRET_ARN), and the
 * addresses SOLANA_HOT_WALLET_ADDRESS, SOLANA_DEPOSIT_ADDRESS and X402_PAY_TO; without them (or
 * with --no-chain) the table alone is audited. `--operator-wallet`: a wallet of the operator's
 * own (cold storage): what is swept to it is no drain.
 * Exit codes: 0 holds, 1 does not hold, 2 could not run (the chain unreadable included).
 */
import { parseArgs } from 'node:util';
import { openLocalChain } from './operator/local-chain';
import { NoTableError, openTable, TABLE_OPTIONS, TABLE_USAGE, type TableTarget } from './operator/table-target';

const USAGE =
  `usage: npm run audit -- ${TABLE_USAGE} [--segments <n>] [--json] ` +
  '[--no-chain] [--operator-wallet <address> ...] [--chain-max-signatures <n>]';

// Lambda runs Node 24; local development may run Node 20, whose SDK notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

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
  const maxSignatures = args.values['chain-max-signatures'] === undefined ? undefined : Number(args.values['chain-max-signatures']);
  if (maxSignatures !== undefined && !(Number.isInteger(maxSignatures) && maxSignatures >= 1_000)) {
    console.error(`--chain-max-signatures must be an integer of at least 1000\n${USAGE}`);
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
  let stopChain = async () => {};

  try {
    if (args.values.local && !args.values['no-chain']) stopChain = await openLocalChain();
    if (target.running && !args.values['no-chain']) await useRunningChain(target.running.solana);
    // Imported after the environment is settled: the config module reads it once.
    const { formatAuditReport, runLedgerAudit } = await import('../functions/audit/ledger-audit');
    const { configuredWallets } = await import('../functions/audit/wallet-audit');
    const chain = !args.values['no-chain'] && configuredWallets() !== undefined;
    const report = await runLedgerAudit({
      segments,
      wallets: chain
        ? { operatorWallets: args.values['operator-wallet'] ?? [], ...(maxSignatures === undefined ? {} : { maxSignatures }) }
        : false,
    });
    if (args.values.json) console.log(JSON.stringify(report, (_key, value) => (typeof value === 'bigint' ? value.toString() : value), 2));
    else {
      console.log(formatAuditReport(report));
      if (!chain) console.log('  wallets not reconciled: no chain configured (USDC_MINT, SOLANA_RPC_URL, wallet addresses), or --no-chain');
    }
    if (!report.ok) console.error(`audit failed: ${report.problems[0] ?? 'unknown'}`);
    return report.ok ? 0 : 1;
  } catch (error) {
    console.error(`audit could not run: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    return 2;
  } finally {
    await stopChain();
    await target.stop();
  }
}

/** The running `npm start`'s chain stand-in and the addresses it gives the service (bin/local/rails.ts), unless set already. */
async function useRunningChain(solana: NonNullable<TableTarget['running']>['solana']): Promise<void> {
  const env = {
    SOLANA_RPC_URL: solana.url,
    USDC_MINT: solana.mint,
    SOLANA_HOT_WALLET_ADDRESS: solana.hotWallet,
    SOLANA_DEPOSIT_ADDRESS: solana.depositWallet,
    X402_PAY_TO: solana.x402PayTo,
  };
  for (const [name, value] of Object.entries(env)) process.env[name] ??= value;
  const { resetForTests } = await import('../functions/config');
  resetForTests();
}

function parse() {
  return parseArgs({
    options: {
      ...TABLE_OPTIONS,
      segments: { type: 'string' },
      json: { type: 'boolean' },
      'no-chain': { type: 'boolean' },
      'operator-wallet': { type: 'string', multiple: true },
      'chain-max-signatures': { type: 'string' },
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
