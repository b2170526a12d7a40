/**
 * A lean keep-alive HTTP client for the benchmarks (node:http, no fetch overhead) and a
 * closed-loop load generator: `concurrency` workers each run one request at a time until the
 * deadline, so throughput is what the system under test sustains at that concurrency.
 */
import { Agent, request } from 'node:http';

export interface BenchReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export type Call = (method: string, path: string, headers?: Record<string, string>, body?: string) => Promise<BenchReply>;

export function httpClient(baseUrl: string, maxSockets = 256): { call: Call; close: () => void } {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets });
  const call: Call = (method, path, headers = {}, body) =>
    new Promise((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          method,
          path,
          agent,
          headers:
            body === undefined ? headers : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
  return { call, close: () => agent.destroy() };
}

export interface LoadResult {
  ops: number;
  errors: number;
  elapsedMs: number;
  opsPerSecond: number;
  /** Latency of each completed operation, ms. */
  latencies: number[];
  /** Count per outcome label (HTTP status or 'ok'/'error'). */
  outcomes: Record<string, number>;
}

/**
 * Runs `op(worker, iteration)` from `concurrency` workers until `durationMs` has passed. `op`
 * returns an outcome label; a thrown error counts as 'error'.
 */
export async function closedLoop(
  concurrency: number,
  durationMs: number,
  op: (worker: number, i: number) => Promise<string>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const outcomes: Record<string, number> = {};
  let errors = 0;
  const start = performance.now();
  const deadline = start + durationMs;
  const worker = async (w: number) => {
    for (let i = 0; performance.now() < deadline; i++) {
      const t0 = performance.now();
      let label: string;
      try {
        label = await op(w, i);
      } catch {
        label = 'error';
        errors += 1;
      }
      latencies.push(performance.now() - t0);
      outcomes[label] = (outcomes[label] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  const elapsedMs = performance.now() - start;
  return { ops: latencies.length, errors, elapsedMs, opsPerSecond: (latencies.length * 1000) / elapsedMs, latencies, outcomes };
}

/** The p-th percentile (0–100) by nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}
