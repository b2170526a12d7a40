/**
 * Whether a wallet has its USDC token account: what the withdraw route asks before it commits a
 * USDC withdrawal (docs/payouts.md, "Wallets without a USDC token account"). Plain JSON-RPC, no
 * Solana SDK (§9: the API bundles carry none). The mint's token program (SPL Token or Token-2022,
 * read from the mint's owner as the payout rail reads it) is fetched once per container; after that
 * each question is ONE `getAccountInfo` of the wallet's associated token account for the mint.
 */
import * as z from 'zod';
import { config, onConfigReset } from '../config';
import type { TokenAccountDirectory } from '../core/withdrawals';
import { RailConfigError, RailUnavailableError } from './errors';
import { associatedTokenAddress, TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from './solana.addresses';
import { solanaRpc, solanaRpcUrl } from './solana.json-rpc';

/** `getAccountInfo`'s answer; only whether the account exists and who owns it is read. */
const accountInfoSchema = z.object({ value: z.object({ owner: z.string() }).loose().nullable() }).loose();

export interface SolanaTokenAccountsOptions {
  /** Default: SOLANA_RPC_URL, or the secret SOLANA_RPC_URL_SECRET_ARN names. */
  rpcUrl?: () => Promise<string>;
  /** Default: USDC_MINT. */
  mint?: string;
  /** Per request. The withdraw function answers within its 10 s; a hung node is an outage (503). */
  timeoutMs?: number;
}

export class SolanaTokenAccounts implements TokenAccountDirectory {
  /** JSON-RPC requests made (tests count them: one per question once warm). */
  calls = 0;
  private program: Promise<string> | undefined;
  private nextId = 1;

  constructor(private readonly options: SolanaTokenAccountsOptions = {}) {}

  async hasUsdcAccount(wallet: string): Promise<boolean> {
    const mint = this.mint();
    const program = await this.tokenProgram(mint);
    const info = await this.accountInfo(associatedTokenAddress(wallet, mint, program));
    // Lamports sent to the address before any account existed make an account the token program
    // does not own: still no token account (the payout's idempotent create takes such an address over).
    return info !== null && info.owner === program;
  }

  /** The program that owns the mint, once per container (retried on the next call if it failed). */
  private tokenProgram(mint: string): Promise<string> {
    this.program ??= this.accountInfo(mint)
      .then((info) => {
        if (!info) throw new RailConfigError('USDC_MINT does not exist on this cluster');
        if (info.owner !== TOKEN_PROGRAM && info.owner !== TOKEN_2022_PROGRAM) {
          throw new RailConfigError('USDC_MINT is not owned by a token program');
        }
        return info.owner;
      })
      .catch((error: unknown) => {
        this.program = undefined;
        throw error;
      });
    return this.program;
  }

  private async accountInfo(address: string): Promise<{ owner: string } | null> {
    this.calls += 1;
    const url = await (this.options.rpcUrl ?? solanaRpcUrl)();
    // No data wanted: the owner says what the account is (dataSlice keeps the answer small).
    const result = await solanaRpc(
      url,
      'getAccountInfo',
      [address, { encoding: 'base64', dataSlice: { offset: 0, length: 0 }, commitment: config().SOLANA_COMMITMENT }],
      { timeoutMs: this.options.timeoutMs ?? 3_000, id: this.nextId++ },
    );
    const parsed = accountInfoSchema.safeParse(result);
    if (!parsed.success) throw new RailUnavailableError('solana getAccountInfo answered an unexpected body');
    return parsed.data.value;
  }

  private mint(): string {
    const mint = this.options.mint ?? config().USDC_MINT;
    if (!mint) throw new RailConfigError('USDC_MINT is not set');
    return mint;
  }
}

let shared: SolanaTokenAccounts | undefined;

/** The container's one directory (its cached mint program with it), built on first use. */
export function usdcTokenAccounts(): SolanaTokenAccounts {
  shared ??= new SolanaTokenAccounts();
  return shared;
}
onConfigReset(() => {
  shared = undefined;
});
