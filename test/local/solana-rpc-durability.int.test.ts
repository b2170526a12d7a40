/**
 * `npm start`'s chain stand-in keeps what it answered (DESIGN §24): a transaction `sendTransaction`
 * answered is in its state file before the answer, so a kill of the process right after (within the
 * 250 ms its snapshots of other changes wait) loses nothing. Before, a payout whose signature the
 * table held was gone from the restarted chain, and `npm run audit` then failed for good on .data/.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';

const ROOT = join(__dirname, '..', '..');
const CHILD = join(__dirname, 'solana-stand-in.child.ts');

interface StandIn {
  child: ChildProcess;
  url: string;
  demoPayer: { publicKey: string; secretKey: string };
}

const running: ChildProcess[] = [];
afterAll(() => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** Starts the stand-in on `stateFile` in a process of its own; resolves once it prints its URL. */
function start(stateFile: string): Promise<StandIn> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, stateFile], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve({ child, ...(JSON.parse(line) as Omit<StandIn, 'child'>) });
    });
    child.once('exit', (code, signal) => reject(new Error(`the stand-in exited (${code ?? signal}) before it started: ${err}`)));
  });
}

async function rpc<T>(url: string, method: string, ...params: unknown[]): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const answer = (await res.json()) as { result?: T; error?: unknown };
  if (answer.error !== undefined) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
  return answer.result as T;
}

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

describe("the chain stand-in's state file", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'solana-durability-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds every transaction sendTransaction answered, though the process is killed at once', async () => {
    const stateFile = join(dir, 'solana.json');
    const first = await start(stateFile);
    const payer = Keypair.fromSecretKey(bs58.decode(first.demoPayer.secretKey));
    const landed: { signature: string; to: string }[] = [];
    // Three in a row, the process killed the moment the last answer arrives: each one's snapshot
    // would otherwise have waited up to 250 ms behind the one before.
    for (let i = 0; i < 3; i += 1) {
      const { value } = await rpc<{ value: { blockhash: string } }>(first.url, 'getLatestBlockhash');
      const to = Keypair.generate().publicKey;
      const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: value.blockhash }).add(
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1_000_000 + i }),
      );
      tx.sign(payer);
      const signature = await rpc<string>(first.url, 'sendTransaction', tx.serialize().toString('base64'), { encoding: 'base64' });
      landed.push({ signature, to: to.toBase58() });
    }
    await killed(first.child);

    const second = await start(stateFile);
    const statuses = await rpc<{ value: ({ err: unknown } | null)[] }>(
      second.url,
      'getSignatureStatuses',
      landed.map((t) => t.signature),
    );
    expect(statuses.value.map((s) => s?.err)).toEqual([null, null, null]);
    for (const [i, { to }] of landed.entries()) {
      expect((await rpc<{ value: number }>(second.url, 'getBalance', to)).value).toBe(1_000_000 + i);
    }
    const history = await rpc<{ signature: string }[]>(second.url, 'getSignaturesForAddress', payer.publicKey.toBase58());
    expect(history.slice(0, 3).map((s) => s.signature)).toEqual(landed.map((t) => t.signature).reverse());
    await killed(second.child);
  }, 120_000);
});
