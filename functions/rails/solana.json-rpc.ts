/**
 * Solana JSON-RPC over plain fetch, for the functions that read the chain without the Solana SDK
 * (§9 keeps @solana/* in the bundles that pay): the top-up watcher (solana.deposits.ts) and the
 * withdraw route (solana.token-accounts.ts). One request, one answer, a timeout; every way it can
 * fail (no answer, a non-2xx status, a JSON-RPC error, no body) is a RailUnavailableError, and the
 * caller decides what an outage means to it. The payout rail itself speaks through web3.js's
 * `Connection` (solana.rail.ts).
 */
import { config, onConfigReset } from '../config';
import { RailConfigError, RailUnavailableError } from './errors';
import { readRailSecret } from './rail-secret';

export interface SolanaRpcOptions {
  /** How long to wait for the answer before giving up. */
  timeoutMs: number;
  /** The JSON-RPC request id (a client numbering its requests passes its own). */
  id?: number;
}

/** Calls `method` on the node at `url` and returns its `result` (null included: "not found"). */
export async function solanaRpc(url: string, method: string, params: unknown[], options: SolanaRpcOptions): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: options.id ?? 1, method, params }),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    throw new RailUnavailableError(`solana ${method} request failed`, { cause: error });
  }
  if (!res.ok) throw new RailUnavailableError(`solana ${method} answered ${res.status}`);
  const body = (await res.json().catch(() => undefined)) as { result?: unknown; error?: { message?: string } } | undefined;
  if (!body || body.error) throw new RailUnavailableError(`solana ${method} failed: ${body?.error?.message ?? 'no body'}`);
  return body.result;
}

let rpcUrlCache: Promise<string> | undefined;

/**
 * The RPC URL: SOLANA_RPC_URL, or on AWS the secret SOLANA_RPC_URL_SECRET_ARN names (a provider's
 * URL carries its API key), read once per container; a failed read is retried on the next call.
 */
export function solanaRpcUrl(): Promise<string> {
  const { SOLANA_RPC_URL, SOLANA_RPC_URL_SECRET_ARN } = config();
  if (SOLANA_RPC_URL) return Promise.resolve(SOLANA_RPC_URL);
  if (!SOLANA_RPC_URL_SECRET_ARN) return Promise.reject(new RailConfigError('neither SOLANA_RPC_URL nor SOLANA_RPC_URL_SECRET_ARN is set'));
  rpcUrlCache ??= readRailSecret('SOLANA_RPC_URL_SECRET_ARN', SOLANA_RPC_URL_SECRET_ARN)
    .then((url) => url.trim())
    .catch((error: unknown) => {
      rpcUrlCache = undefined;
      throw error;
    });
  return rpcUrlCache;
}
onConfigReset(() => {
  rpcUrlCache = undefined;
});
