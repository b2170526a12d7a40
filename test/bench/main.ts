/**
 * The benchmark run (`npm run bench`, entry bin/bench.ts). One DynamoDB Local and one local stack
 * for the whole run, phases one after another, results to bench-results/benchmarks.{json,md,svg}
 * (docs/ only with `--docs`, see args.ts). It ends with the items and partitions charges share
 * (shared.ts, counted from keys), the warm charge's DynamoDB figures, the cost
 * per million charges (cost.ts), and, last, `bench: service/raw throughput ratio R`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { PROJECT_ROOT } from '../../bin/local/dynamodb-local';
import { startLocalStack } from '../../bin/local/stack';
import { parseBenchArgs, USAGE } from './args';
import { bundleCosts } from './bundles';
import type { BenchContext } from './context';
import { costSummaryLines } from './cost';
import { httpClient } from './http';
import { endpointLatency } from './latency';
import { loadRun, settleAndCheck } from './load';
import { deepPagination } from './pagination';
import { type BenchReport, renderMarkdown, renderSvg, roundRatios } from './report';
import { requestsPerOperation, TOPUP_CREDIT_ENDPOINT } from './requests';
import { sharedDetailLines, sharedItemsAndPartitions, sharedSummaryLines } from './shared';
import { tabUsageCost, tabUsageLines } from './tab-usage';
import { chargeThroughput } from './throughput';

const RECONCILE_AFTER_SECONDS = 5;

export async function main(argv: string[]): Promise<number> {
  const parsed = parseBenchArgs(argv, PROJECT_ROOT);
  if (parsed.kind === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (parsed.kind === 'error') {
    console.error(`${parsed.message}\n${USAGE}`);
    return 2;
  }
  const { quick, loadSeconds, concurrency, outDir, write } = parsed.options;
  const shown = relative(PROJECT_ROOT, outDir) || '.';
  if (parsed.options.renderOnly) {
    // Re-renders the Markdown and the chart from the figures of the last run (no measuring). The
    // shared-items section names the store's shard settings, read through the configuration, which
    // wants a table name even though no table is touched here.
    process.env.TABLE_NAME ??= 'bench';
    const source = join(outDir, 'benchmarks.json');
    if (!existsSync(source)) {
      console.error(
        `no ${join(shown, 'benchmarks.json')} to re-render (run the bench first${parsed.options.docs ? '' : ', or add --docs'})`,
      );
      return 2;
    }
    const report = JSON.parse(readFileSync(source, 'utf8')) as BenchReport;
    writeFileSync(join(outDir, 'benchmarks.md'), renderMarkdown(report));
    writeFileSync(join(outDir, 'benchmarks.svg'), renderSvg(report));
    console.log(`re-rendered ${join(shown, 'benchmarks.{md,svg}')} from the run of ${report.generatedAt}`);
    for (const line of [...sharedSummaryLines(report.shared), ...costSummaryLines(report)]) console.log(line);
    console.log(`bench: service/raw throughput ratio ${report.throughput.ratio.toFixed(2)}`);
    return 0;
  }
  const started = performance.now();
  const loadAverageAtStart = loadavg();
  const log = (line: string) => console.log(line);
  const phase = (name: string) => log(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${name}`);

  phase('starting DynamoDB Local and the local stack (handlers, SQS, payout worker, rails)');
  // `npm start`'s pipeline, except that the reconciler looks every second at payouts idle for 5 s
  // (locally 30/60 s, on AWS minutes), so stragglers of the load run finish within the run.
  const stack = await startLocalStack({
    port: 0,
    inMemory: true,
    tableName: 'bench',
    env: {
      LOG_LEVEL: 'SILENT',
      RECONCILE_PENDING_AFTER_SECONDS: String(RECONCILE_AFTER_SECONDS),
      RECONCILE_PROCESSING_AFTER_SECONDS: String(RECONCILE_AFTER_SECONDS),
    },
    payouts: { reconcileIntervalMs: 1_000 },
    // The top-up phase runs the watcher itself, counted.
    topupWatchIntervalMs: 0,
  });
  const { call, close } = httpClient(stack.url);
  const ctx: BenchContext = { stack, call, admin: { 'x-admin-key': stack.adminKey }, quick, log };
  try {
    phase(`charge throughput: service vs raw TransactWriteItems, concurrency ${concurrency}`);
    const throughput = await chargeThroughput(
      ctx,
      quick
        ? { concurrency, roundSeconds: 2, rounds: 6, warmupSeconds: 5 }
        : { concurrency, roundSeconds: 4, rounds: 12, warmupSeconds: 15 },
    );
    log(
      `  service ${throughput.serviceOpsPerSecond.toFixed(1)} ops/s, raw ${throughput.rawOpsPerSecond.toFixed(1)} ops/s, ratio ${throughput.ratio.toFixed(2)} (rounds ${roundRatios(
        throughput,
      )
        .map((x) => x.toFixed(2))
        .join(', ')})`,
    );

    // The same comparison at lower concurrency: at 1 it is a per-request overhead figure, higher up
    // it shows where DynamoDB Local itself becomes the limit.
    const sweep = [];
    for (const c of quick ? [1] : [1, 4, 32]) {
      phase(`charge throughput at concurrency ${c}`);
      const r = await chargeThroughput(ctx, { concurrency: c, roundSeconds: quick ? 2 : 3, rounds: quick ? 3 : 4, warmupSeconds: 2 });
      log(`  service ${r.serviceOpsPerSecond.toFixed(1)} ops/s, raw ${r.rawOpsPerSecond.toFixed(1)} ops/s, ratio ${r.ratio.toFixed(2)}`);
      sweep.push(r);
    }

    phase('DynamoDB requests per operation, cold and warm');
    const requests = await requestsPerOperation(ctx);
    for (const q of requests)
      log(`  ${q.endpoint.padEnd(40)} ${q.case.padEnd(32)} ${q.state}  ${JSON.stringify(q.dynamo)}${q.sqs ? ` +${q.sqs} SQS` : ''}`);
    const topup = requests.find((q) => q.endpoint === TOPUP_CREDIT_ENDPOINT);
    if (topup) {
      log(`bench: topup credit requests ${topup.reads + topup.writes}`);
      log(`  (${JSON.stringify(topup.dynamo)}; ${topup.case})`);
    }

    phase('items and partitions the charges of one agent and of one payer share (counted from the keys sent)');
    const shared = await sharedItemsAndPartitions(ctx);
    for (const line of [...sharedSummaryLines(shared).map((l) => `  ${l.replace(/^bench: /, '')}`), ...sharedDetailLines(shared)])
      log(line);

    phase('a use of a tab (DESIGN §29): its requests, write units, cost, and what uses of one payer share');
    for (const line of tabUsageLines(await tabUsageCost(ctx))) log(line);

    phase('latency per endpoint');
    const latency = await endpointLatency(ctx, quick ? 40 : 200);
    for (const l of latency)
      log(`  ${l.endpoint.padEnd(40)} p50 ${l.p50Ms.toFixed(2)}  p95 ${l.p95Ms.toFixed(2)}  p99 ${l.p99Ms.toFixed(2)} ms`);

    phase('deep pagination: page 1 vs page 100');
    const pagination = await deepPagination(ctx);
    for (const p of pagination.rows)
      log(`  ${p.case.padEnd(55)} ${p.readRequests} reads, ${p.itemsRead} items, ${p.readUnits} RCU, ${p.medianMs.toFixed(2)} ms`);

    phase('bundle sizes and module-load CPU');
    const bundles = await bundleCosts(quick ? 5 : 11, log);
    for (const b of bundles.rows)
      log(
        `  ${b.name.padEnd(20)} ${(b.bytes / 1000).toFixed(1).padStart(7)} KB  load ${b.loadCpuMs.toFixed(1)} ms CPU (+${b.extraCpuMs.toFixed(1)} over empty)`,
      );

    let load: BenchReport['load'] = null;
    if (loadSeconds > 0) {
      phase(`load run: ${loadSeconds} s`);
      load = await loadRun(ctx, { seconds: loadSeconds, concurrency: 32, agents: quick ? 20 : 40, users: quick ? 100 : 200 });
      log(
        `  ${load.requests} requests (${load.requestsPerSecond.toFixed(1)}/s), 5xx ${load.serverErrors}, payouts settled ${load.settleSeconds.toFixed(1)} s after the load`,
      );
      log(`  ${JSON.stringify(load.outcomes)}`);
      log(
        `  webhook delivery lag (payout commit → local receiver): ${load.webhookLag.events} events for ${load.webhookLag.payouts} withdrawals, p50 ${load.webhookLag.p50Ms.toFixed(0)} ms, p99 ${load.webhookLag.p99Ms.toFixed(0)} ms`,
      );
    }

    phase('settling payouts; ledger audit over the whole run');
    const final = await settleAndCheck(ctx);
    log(final.audit.summary.replace(/^/gm, '  '));
    log(
      `  payouts ${final.payouts.total} (${final.payouts.completed} COMPLETED, ${final.payouts.failed} FAILED, ${final.payouts.stillInFlight} in flight), paid twice ${final.paidTwice.length}`,
    );

    const report: BenchReport = {
      generatedAt: new Date().toISOString(),
      mode: quick ? 'quick' : 'full',
      command: `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`,
      durationSeconds: (performance.now() - started) / 1000,
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
        node: process.version,
        platform: `${process.platform}-${process.arch}`,
        loadAverageAtStart,
        loadAverageAtEnd: loadavg(),
      },
      throughput,
      throughputByConcurrency: sweep,
      requests,
      shared,
      latency,
      pagination,
      bundles,
      load,
      final,
    };
    if (write) {
      mkdirSync(outDir, { recursive: true });
      writeFileSync(join(outDir, 'benchmarks.json'), `${JSON.stringify(report, null, 2)}\n`);
      writeFileSync(join(outDir, 'benchmarks.md'), renderMarkdown(report));
      writeFileSync(join(outDir, 'benchmarks.svg'), renderSvg(report));
      log(`wrote ${join(shown, 'benchmarks.{json,md,svg}')}`);
    }
    const problems = [
      ...(final.audit.ok ? [] : ['the ledger audit does not hold']),
      ...(final.paidTwice.length
        ? [`${final.paidTwice.length} payout(s) paid more than once: ${final.paidTwice.slice(0, 3).join('; ')}`]
        : []),
      ...(load && load.serverErrors > 0 ? [`${load.serverErrors} 5xx answers under load`] : []),
      ...[throughput, ...sweep]
        .filter((x) => x.failures > 0)
        .map((x) => `${x.failures} charges failed in the throughput phase at concurrency ${x.concurrency}`),
    ];
    for (const p of problems) console.error(`bench: ${p}`);
    for (const line of [...sharedSummaryLines(shared), ...costSummaryLines(report)]) console.log(line);
    console.log(`bench: service/raw throughput ratio ${throughput.ratio.toFixed(2)}`);
    return problems.length ? 1 : 0;
  } finally {
    close();
    await stack.stop();
  }
}
