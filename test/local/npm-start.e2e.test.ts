/**
 * `npm start` as a user runs it: a separate process (bin/local.ts) with its own DynamoDB Local.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../bin/local/local-server';
import { eventually } from '../support/eventually';

const ROOT = join(__dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

function start(port: number): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  let out = '';
  const child = spawn(TSX, ['bin/local.ts'], {
    cwd: ROOT,
    env: { ...process.env, IN_MEMORY: '1', PORT: String(port), ADMIN_KEY: 'npm-start-test-admin-key', LOG_LEVEL: 'ERROR' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
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

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm start', () => {
  // Two cold starts of the whole stack (tsx, DynamoDB Local's JVM) on a 2-core machine shared with
  // the rest of the suite: give it room.
  it('serves the stack, refuses a busy port plainly, and stops cleanly on SIGTERM leaving no Java', async () => {
    const port = await freePort();
    const first = start(port);
    await eventually('npm start to be ready', () => first.output().includes('Ctrl-C stops everything'), {
      timeoutMs: 120_000,
      intervalMs: 100,
    });
    expect(first.output()).toContain(`running at http://127.0.0.1:${port}`);
    expect(first.output()).toContain('admin key   npm-start-test-admin-key');
    expect(first.output()).toMatch(/user key {4}uk_live_\w+/);
    // In memory, the demo payer's keypair goes to a temporary folder of this stack's own, not .data/.
    expect(first.output()).toContain(`keypair in ${join(tmpdir(), 'agent-payments-demo-')}`);
    expect(first.output()).not.toContain('.data/demo-payer.json');
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);

    const tree = descendants(first.child.pid ?? 0);
    expect(tree.length).toBeGreaterThan(0);

    const second = start(port);
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(`port ${port} is already in use`);
    expect(second.output()).not.toMatch(/\n\s+at /); // no stack trace

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    await eventually('every process of the tree to exit', () => tree.every((pid) => !alive(pid)), { intervalMs: 100 });
  }, 180_000);
});
