/**
 * `npm start` as a user runs it: a separate process (bin/local.ts) with its own DynamoDB Local.
 * `npm run audit` and `npm run admin` as typed (no table named) use its table (DESIGN §24), and it
 * exits loudly when its DynamoDB Local dies.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../bin/local/local-server';
import { RUNNING_DIR } from '../../bin/local/running';
import { eventually } from '../support/eventually';

const ROOT = join(__dirname, '..', '..');
/**
 * What `npm start` runs (package.json): one node process with tsx as its loader. Not the `tsx`
 * binary, which runs the program in a child process and relays signals to it: under load, a child
 * slower than 30 ms to acknowledge a SIGTERM was SIGKILLed, leaving DynamoDB Local's Java running.
 */
const START = ['--import', 'tsx', 'bin/local.ts'];

/**
 * Starts `npm start`'s program. With `logFile` its output goes to that file, as a script's
 * `npm start > log &` sends it (written as it is printed, no pipe between), else through a pipe.
 */
/** Every program started, so a failed test does not leave one running (with its Java). */
const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
});

function start(port: number, logFile?: string): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  let out = '';
  const log = logFile === undefined ? undefined : openSync(logFile, 'w');
  const child = spawn(process.execPath, START, {
    cwd: ROOT,
    env: { ...process.env, IN_MEMORY: '1', PORT: String(port), ADMIN_KEY: 'npm-start-test-admin-key', LOG_LEVEL: 'ERROR' },
    stdio: log === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', log, log],
  });
  if (log !== undefined) closeSync(log);
  started.push(child);
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => (logFile === undefined ? out : readFileSync(logFile, 'utf8')), exited };
}

/** Every process below `pid` (tsx → node → java). */
function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    children = execFileSync('pgrep', ['-P', String(pid)])
      .toString()
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
  return children.flatMap((c) => [c, ...descendants(c)]);
}

/**
 * An operator tool as typed (`npm run audit`, `npm run admin -- …`: tsx on bin/<tool>.ts), with no
 * table in its environment: only PORT, as a user with two stacks would choose one.
 */
function tool(script: 'audit' | 'admin', args: string[], port: number): Promise<{ code: number | null; out: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port) };
  for (const name of ['TABLE_NAME', 'DYNAMODB_ENDPOINT', 'LOCAL', 'ADMIN_KEY', 'LOG_LEVEL']) delete env[name];
  const child = spawn(process.execPath, ['--import', 'tsx', `bin/${script}.ts`, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })));
}

/** Waits for npm start's /health to answer 200 (its banner is then complete). */
async function ready(port: number, output: () => string): Promise<string> {
  return eventually(
    'npm start to answer /health',
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
      return res?.status === 200 ? output() : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 50 },
  );
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm start', () => {
  it('runs the program as this test does', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.start).toBe(['node', ...START].join(' '));
  });

  // Two cold starts of the whole stack (tsx, DynamoDB Local's JVM) on a 2-core machine shared with
  // the rest of the suite: give it room.
  it('serves the stack, refuses a busy port plainly, and stops cleanly on SIGTERM leaving no Java', async () => {
    const port = await freePort();
    const log = join(mkdtempSync(join(tmpdir(), 'npm-start-test-')), 'out.log');
    const first = start(port, log);
    // As a script waits for it: /health, polled. The first 200 comes only once the whole banner
    // is in the log (the demo user, the RPC and demo payer lines a script reads next); before it,
    // 503 `starting, retry later` or no connection at all.
    const early: number[] = [];
    await eventually(
      'npm start to answer /health',
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
        if (res?.status === 200) return first.output();
        if (res) early.push(res.status);
        return undefined;
      },
      { timeoutMs: 120_000, intervalMs: 20 },
    ).then((banner) => {
      for (const line of ['user key    uk_live_', 'solana rpc  http://127.0.0.1:', 'demo payer  ', 'Ctrl-C stops everything']) {
        expect(banner).toContain(line);
      }
    });
    expect(early.every((status) => status === 503)).toBe(true);
    expect(first.output()).toContain(`running at http://127.0.0.1:${port}`);
    expect(first.output()).toContain('admin key   npm-start-test-admin-key');
    expect(first.output()).toMatch(/user key {4}uk_live_\w+/);
    // In memory, the demo payer's keypair goes to a temporary folder of this stack's own, not .data/.
    expect(first.output()).toContain(`keypair in ${join(tmpdir(), 'agent-payments-demo-')}`);
    expect(first.output()).not.toContain('.data/demo-payer.json');
    // Its export line names the file, for the docs' steps that pay with it (docs/payers.md, docs/x402.md).
    expect(first.output()).toMatch(/export BASE=\S+ ADMIN_KEY=\S+ USER_KEY=\S+ DEMO_PAYER=\S+agent-payments-demo-\w+\/demo-payer\.json\n/);
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);

    const tree = descendants(first.child.pid ?? 0);
    expect(tree.length).toBeGreaterThan(0);

    // The operator tools as typed find this stack's (in-memory) table through its record.
    expect(existsSync(join(RUNNING_DIR, `${port}.json`))).toBe(true);
    const registered = await fetch(`http://127.0.0.1:${port}/api/v1/agents/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: `waiting-${port}`, email: 'dev@example.com', website: 'https://example.com' }),
    });
    const { agentId } = (await registered.json()) as { agentId: string };
    const [audit, pending] = await Promise.all([tool('audit', [], port), tool('admin', ['list-agents', '--pending'], port)]);
    expect([audit.code, audit.out]).toEqual([0, expect.stringContaining('ledger audit: HOLDS')]);
    // Its chain stand-in too: the hot wallet's genesis USDC, reconciled.
    expect(audit.out).toContain('wallets USDC on chain');
    expect(pending.code).toBe(0);
    expect((JSON.parse(pending.out) as { data: { id: string }[] }).data.map((a) => a.id)).toEqual([agentId]);

    const second = start(port);
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(`port ${port} is already in use`);
    expect(second.output()).not.toMatch(/\n\s+at /); // no stack trace

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    await eventually('every process of the tree to exit', () => tree.every((pid) => !alive(pid)), { intervalMs: 100 });

    // Stopped, its record is gone, and the tools say what to do.
    expect(existsSync(join(RUNNING_DIR, `${port}.json`))).toBe(false);
    const none = await tool('audit', [], port);
    expect(none.code).toBe(2);
    expect(none.out).toContain(`npm start is not running on port ${port} in this folder. Run \`npm start\` first`);
    const noneAdmin = await tool('admin', ['list-agents', '--pending'], port);
    expect(noneAdmin.code).toBe(2);
    expect(noneAdmin.out).toContain('Run `npm start` first');
  }, 240_000);

  it('exits non-zero, saying why, when its DynamoDB Local dies (not "service busy" forever)', async () => {
    const port = await freePort();
    const stack = start(port);
    await ready(port, stack.output);
    const java = descendants(stack.child.pid ?? 0).filter((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'java');
    expect(java).toHaveLength(1);
    process.kill(java[0] ?? 0, 'SIGKILL');
    expect(await stack.exited).toBe(1);
    expect(stack.output()).toContain('error: DynamoDB Local was killed (SIGKILL)');
    expect(stack.output()).toContain('npm start cannot serve without its database, so it stops here');
    expect(stack.output()).not.toMatch(/\n\s+at /); // no stack trace of ours
    expect(existsSync(join(RUNNING_DIR, `${port}.json`))).toBe(false);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  }, 180_000);
});
