/**
 * Runs the real DynamoDB Local jar (fetched once by scripts/fetch-dynamodb-local.mjs) as a child
 * process on a free loopback port, and makes sure it never outlives us.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { freePort } from './local-server';

export const PROJECT_ROOT = join(__dirname, '..', '..');
const JAR_DIR = join(PROJECT_ROOT, '.cache', 'dynamodb-local');

export interface DynamoDbLocal {
  endpoint: string;
  stop(): Promise<void>;
}

function ensureJar(): string {
  const jar = join(JAR_DIR, 'DynamoDBLocal.jar');
  if (!existsSync(jar)) {
    execFileSync(process.execPath, [join(PROJECT_ROOT, 'scripts', 'fetch-dynamodb-local.mjs')], { stdio: 'inherit' });
  }
  return jar;
}

function ensureJava(): void {
  try {
    execFileSync('java', ['-version'], { stdio: 'ignore' });
  } catch {
    throw new Error('DynamoDB Local needs a Java 17+ runtime on PATH (Debian/Ubuntu: apt-get install -y openjdk-17-jre-headless)');
  }
}

/**
 * Starts DynamoDB Local: in memory, or persisting under `dataDir`. Resolves once it answers.
 * `jvmFlags` replace the default heap flag (the bench's throughput candidates try others).
 * `onExit` is told why when Java exits after it answered and before `stop()` (killed, crashed):
 * `npm start` then stops loudly rather than answer `service busy` forever.
 */
export async function startDynamoDbLocal(opts: {
  inMemory: boolean;
  dataDir?: string;
  jvmFlags?: readonly string[];
  onExit?: (reason: string) => void;
}): Promise<DynamoDbLocal> {
  ensureJava();
  const jar = ensureJar();
  const port = await freePort();
  const args = [
    `-Djava.library.path=${join(JAR_DIR, 'DynamoDBLocal_lib')}`,
    ...(opts.jvmFlags ?? ['-Xms64m']),
    '-jar',
    jar,
    '-port',
    String(port),
    '-sharedDb',
    '-disableTelemetry',
  ];
  if (opts.inMemory) args.push('-inMemory');
  else {
    const dir = opts.dataDir ?? join(PROJECT_ROOT, '.data', 'dynamodb');
    mkdirSync(dir, { recursive: true });
    args.push('-dbPath', dir);
  }
  const child: ChildProcess = spawn('java', args, { cwd: JAR_DIR, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  // If this process exits for any reason, take Java with it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited (${child.exitCode}): ${stderr.trim()}`);
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`DynamoDB Local did not start within 60 s: ${stderr.trim()}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  client.destroy();
  // What it says from now on: its start-up notices are no clue to why it died.
  stderr = '';

  let stopping = false;
  child.once('exit', (code, signal) => {
    if (stopping) return;
    const how = signal ? `was killed (${signal})` : `exited (code ${code})`;
    const said = stderr.trim().split('\n').slice(-5).join('\n').trim();
    opts.onExit?.(`DynamoDB Local ${how}${said ? `; its last words:\n${said}` : ''}`);
  });

  return {
    endpoint,
    stop: () =>
      new Promise<void>((resolve) => {
        stopping = true;
        process.removeListener('exit', killOnExit);
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
