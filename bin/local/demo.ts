/**
 * A ready demo for newcomers: one user with a known user key and a starting balance. The key is
 * kept in .data/demo.json (local only) so a restart can print it again; in memory it is fresh.
 * Also the local chain's funded demo payer, written where bin/pay-topup.ts reads it.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT } from './dynamodb-local';

export interface DemoUser {
  id: string;
  userKey: string;
}

export async function ensureDemoUser(baseUrl: string, adminKey: string, file: string | undefined): Promise<DemoUser> {
  if (file && existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as DemoUser;
    const res = await fetch(`${baseUrl}/api/v1/admin/users/${saved.id}`, { headers: { 'x-admin-key': adminKey } });
    if (res.ok) return saved;
  }
  const created = await fetch(`${baseUrl}/api/v1/admin/users`, { method: 'POST', headers: { 'x-admin-key': adminKey } });
  if (created.status !== 201) throw new Error(`could not create the demo user: ${created.status}`);
  const user = (await created.json()) as DemoUser;
  for (const currency of ['USD', 'USDC']) {
    const res = await fetch(`${baseUrl}/api/v1/admin/users/${user.id}/credits`, {
      method: 'POST',
      headers: { 'x-admin-key': adminKey, 'content-type': 'application/json', 'idempotency-key': `demo-seed-${user.id}-${currency}` },
      body: JSON.stringify({ amount: 100, currency }),
    });
    if (!res.ok) throw new Error(`could not credit the demo user: ${res.status}`);
  }
  if (file) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(user, null, 2), { mode: 0o600 });
  }
  return user;
}

export interface DemoPayerFile {
  /** Where the keypair is: `DEMO_PAYER` for bin/pay-topup.ts when it is not the default. */
  file: string;
  /** Removes a throwaway file (in memory); keeps a persistent one. */
  remove(): void;
}

/**
 * Writes the local chain's demo payer (keypair, RPC URL, mint) for bin/pay-topup.ts. A persistent
 * stack keeps it in `<dataDir>/demo-payer.json` beside its chain; an in-memory stack's chain and
 * payer are new at each start, so the file goes to a fresh folder of its own under the system's
 * temporary directory: two in-memory stacks on one machine never overwrite each other's payer.
 */
export function writeDemoPayerFile(
  payer: { publicKey: string; secretKey: string; rpcUrl: string; usdcMint: string },
  opts: { inMemory: boolean; dataDir: string },
): DemoPayerFile {
  const dir = opts.inMemory ? mkdtempSync(join(tmpdir(), 'agent-payments-demo-')) : opts.dataDir;
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'demo-payer.json');
  writeFileSync(file, `${JSON.stringify(payer, null, 2)}\n`, { mode: 0o600 });
  return { file, remove: () => (opts.inMemory ? rmSync(dir, { recursive: true, force: true }) : undefined) };
}

/** What bin/pay-topup.ts (and docs/x402.md's buyer) read: the keypair and the chain it pays on. */
export interface DemoPayer {
  publicKey: string;
  secretKey: string;
  rpcUrl: string;
  usdcMint: string;
}

/** Where the demo payer is when DEMO_PAYER does not say: beside a kept database. */
export const DEFAULT_DEMO_PAYER = join(PROJECT_ROOT, '.data', 'demo-payer.json');

/**
 * Reads the demo payer from `DEMO_PAYER`, else from .data/. Missing, the error says where an
 * in-memory `npm start` (IN_MEMORY=1) writes it instead, the usual reason it is not in .data/.
 */
export function readDemoPayerFile(
  env: { DEMO_PAYER?: string | undefined } = process.env,
  defaultFile = DEFAULT_DEMO_PAYER,
): { file: string; payer: DemoPayer } {
  const file = env.DEMO_PAYER ?? defaultFile;
  if (!existsSync(file)) {
    throw new Error(
      env.DEMO_PAYER === undefined
        ? `no demo payer at ${file}. npm start writes it there, except with IN_MEMORY=1: then it is in a temporary folder, ` +
            'shown on its "demo payer" line (keypair in …/demo-payer.json); pass that file as DEMO_PAYER=<file>.'
        : `no demo payer at DEMO_PAYER=${file}: give the file npm start printed on its "demo payer" line (an in-memory ` +
            "npm start's file is removed when it stops, and the next one prints a new one).",
    );
  }
  return { file, payer: JSON.parse(readFileSync(file, 'utf8')) as DemoPayer };
}
