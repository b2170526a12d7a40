/**
 * `npm run bench`: the service's performance, measured on this machine (test/bench/main.ts).
 *
 *   npm run bench                    full run (about 10 minutes), results to bench-results/ (git-ignored)
 *   npm run bench -- --quick         shorter phases (under 3 minutes on 2 cores)
 *   npm run bench -- --docs          full run whose results replace docs/benchmarks.{md,json,svg}
 *   npm run bench -- --out <dir>     results to <dir> instead of bench-results/
 *   npm run bench -- --load 60       load-run length in seconds (0 skips it)
 *   npm run bench -- --no-write      print only
 *   npm run bench -- --render-only   rewrite benchmarks.{md,svg} from benchmarks.json in bench-results/
 *                                    (or --out <dir>; with --docs, in docs/)
 *
 * The committed figures change only when asked: `--quick --docs` is refused, since a quick run is
 * noisier than what docs/benchmarks.md promises.
 *
 * It ends with DESIGN §18's counted lines (test/bench/shared.ts: from the keys every charge's
 * transaction sends, not timings): `bench: items shared by all charges of one agent N`,
 * `bench: partitions written by 1000 charges of one agent P max share S%` and `bench: items shared
 * by all charges of one payer N`; then `bench: warm charge requests N reads R wcu W`, `bench: policy
 * charge requests N reads R wcu W` (the same charge by a payer whose spending policy has limits), `bench: grant charge requests
 * N reads R wcu W` (made with a grant key, DESIGN §16), `bench: x402 settle requests N reads R wcu W`
 * (DESIGN §17), `bench: x402 purchase requests N reads R wcu W` (a grant key's purchase below the
 * approval threshold, DESIGN §22), `bench: console overview requests N` (one signed-in GET /console,
 * the session's read included, DESIGN §21), `bench: statement page requests N` (the most a warm page of
 * the payer's statement sent, DESIGN §26), `bench: cost per million charges $X` and, last, `bench: service/raw throughput ratio R`. Exit code 1 when the run found a
 * correctness problem (audit, double payment, 5xx), 2 on bad arguments.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

import('../test/bench/main')
  .then(({ main }) => main(process.argv.slice(2)))
  .then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(2);
    },
  );
