/**
 * Per-function bundle size and module-load CPU. Every function is bundled with the CDK stack's
 * own esbuild options (lib/bundling.ts: ESM, node target, mainFields module,main, minified, SDK
 * bundled), plus an empty handler built the same way as the baseline. Each bundle is then loaded
 * by fresh Node processes, interleaved, and the CPU time of the `import()` is measured in the
 * child itself; medians of several processes, reported against the empty handler of the same run.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { handlerEntry, ROUTES } from '../../functions/api/routes';
import { esbuildOptions } from '../../lib/bundling';
import { RECONCILER_ENTRY, WORKER_ENTRY } from '../../lib/payout-pipeline';
import { INIT_ENV } from '../support/init-env';
import { median } from './http';

const run = promisify(execFile);

export interface BundleRow {
  name: string;
  entry: string;
  bytes: number;
  gzipBytes: number;
  modules: number;
  /** Median CPU ms of `await import(bundle)` in a fresh process. */
  loadCpuMs: number;
  loadWallMs: number;
  /** loadCpuMs − the empty handler's. */
  extraCpuMs: number;
  /** Whole-process CPU (Node start + load) ÷ the empty handler's. */
  processCpuRatio: number;
}

export interface BundleResult {
  target: string;
  processes: number;
  empty: { bytes: number; loadCpuMs: number; processCpuMs: number };
  rows: BundleRow[];
}

const LOADER = `import { pathToFileURL } from 'node:url';
const t0 = process.cpuUsage();
const w0 = performance.now();
const mod = await import(pathToFileURL(process.argv[2]).href);
const cpu = process.cpuUsage(t0);
const wall = performance.now() - w0;
if (typeof mod.handler !== 'function') throw new Error('no handler export');
const total = process.cpuUsage();
process.stdout.write(JSON.stringify({ cpu: (cpu.user + cpu.system) / 1000, wall, proc: (total.user + total.system) / 1000 }));
`;

interface Sample {
  cpu: number;
  wall: number;
  proc: number;
}

export async function bundleCosts(processes: number, log: (line: string) => void): Promise<BundleResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'aps-bench-bundles-'));
  try {
    const emptyEntry = path.join(dir, 'empty-handler.ts');
    writeFileSync(emptyEntry, 'export const handler = async () => ({ statusCode: 200, body: "" });\n');
    const loader = path.join(dir, 'load.mjs');
    writeFileSync(loader, LOADER);
    const entries = [
      { name: '(empty handler)', entry: emptyEntry },
      ...ROUTES.map((r) => ({ name: r.name, entry: handlerEntry(r) })),
      { name: 'payout-worker', entry: WORKER_ENTRY },
      { name: 'reconciler', entry: RECONCILER_ENTRY },
    ];
    const built = await Promise.all(
      entries.map(async ({ name, entry }) => {
        const file = path.join(dir, name.replace(/[^a-z-]/g, '') || 'empty', 'index.mjs');
        const options = esbuildOptions(entry, file);
        const result = await build({ ...options, metafile: true });
        const output = Object.values((result.metafile as Metafile).outputs).find((o) => o.entryPoint);
        const bytes = statSync(file).size;
        const gzipBytes = gzipSync(await readFile(file)).length;
        return { name, entry, file, bytes, gzipBytes, modules: Object.keys(output?.inputs ?? {}).length, target: String(options.target) };
      }),
    );
    log(`  built ${built.length} bundles (target ${built[0]?.target}); loading each in ${processes} fresh processes`);

    // Anything a handler reads at module scope; no network is touched by a load.
    const env = {
      ...process.env,
      ...INIT_ENV,
      TABLE_NAME: 'bench-load',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'x',
      AWS_SECRET_ACCESS_KEY: 'x',
      LOG_LEVEL: 'SILENT',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    const samples = new Map<string, Sample[]>(built.map((b) => [b.name, []]));
    for (let i = 0; i < processes; i++) {
      for (const b of built) {
        const { stdout } = await run(process.execPath, [loader, b.file], { env, maxBuffer: 1 << 20 });
        samples.get(b.name)?.push(JSON.parse(stdout) as Sample);
      }
    }
    const med = (name: string, key: keyof Sample) => median((samples.get(name) ?? []).map((s) => s[key]));
    const emptyName = '(empty handler)';
    const empty = { bytes: built[0]?.bytes ?? 0, loadCpuMs: med(emptyName, 'cpu'), processCpuMs: med(emptyName, 'proc') };
    const rows = built
      .filter((b) => b.name !== emptyName)
      .map((b) => ({
        name: b.name,
        entry: b.entry,
        bytes: b.bytes,
        gzipBytes: b.gzipBytes,
        modules: b.modules,
        loadCpuMs: med(b.name, 'cpu'),
        loadWallMs: med(b.name, 'wall'),
        extraCpuMs: med(b.name, 'cpu') - empty.loadCpuMs,
        processCpuRatio: med(b.name, 'proc') / empty.processCpuMs,
      }));
    return { target: built[0]?.target ?? '', processes, empty, rows };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
