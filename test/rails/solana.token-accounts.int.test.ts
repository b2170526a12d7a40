/**
 * The withdraw route's question "does this wallet have its USDC token account?", over plain
 * JSON-RPC against LiteSVM behind the local stand-in: the same chain the payout rail pays on.
 */
import { getAssociatedTokenAddressSync, TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import { Keypair, PublicKey } from '@solana/web3.js';
import { type LocalSolana, startLocalSolana } from '../../bin/local/solana-rpc';
import { RailConfigError, RailUnavailableError } from '../../functions/rails/errors';
import { associatedTokenAddress, TOKEN_2022_PROGRAM } from '../../functions/rails/solana.addresses';
import { SolanaTokenAccounts } from '../../functions/rails/solana.token-accounts';

let chain: LocalSolana;
beforeAll(async () => {
  chain = await startLocalSolana();
});
afterAll(async () => {
  await chain?.stop();
});

const directory = (opts: { mint?: string; url?: string } = {}) =>
  new SolanaTokenAccounts({ rpcUrl: async () => opts.url ?? chain.url, mint: opts.mint ?? chain.mint, timeoutMs: 1_000 });
const freshWallet = () => Keypair.generate().publicKey.toBase58();

describe('SolanaTokenAccounts', () => {
  it('says no for a fresh wallet and yes once its token account exists, one getAccountInfo per question when warm', async () => {
    const accounts = directory();
    const wallet = freshWallet();
    expect(await accounts.hasUsdcAccount(wallet)).toBe(false);
    expect(accounts.calls).toBe(2); // the mint's program (once per container), then the wallet's account
    chain.createTokenAccount(wallet);
    expect(await accounts.hasUsdcAccount(wallet)).toBe(true);
    expect(accounts.calls).toBe(3);
    expect(await accounts.hasUsdcAccount(freshWallet())).toBe(false);
    expect(accounts.calls).toBe(4);
  });

  it('an outage is a RailUnavailableError, never an answer: an HTTP 503, a node that is gone', async () => {
    const accounts = directory();
    const wallet = freshWallet();
    chain.createTokenAccount(wallet);
    expect(await accounts.hasUsdcAccount(wallet)).toBe(true);
    chain.failNext('getAccountInfo', 1);
    await expect(accounts.hasUsdcAccount(wallet)).rejects.toBeInstanceOf(RailUnavailableError);
    expect(await accounts.hasUsdcAccount(wallet)).toBe(true);
    await expect(directory({ url: 'http://127.0.0.1:1' }).hasUsdcAccount(wallet)).rejects.toBeInstanceOf(RailUnavailableError);
  });

  it('a mint the cluster does not have, or that no token program owns, is a configuration error', async () => {
    await expect(directory({ mint: freshWallet() }).hasUsdcAccount(freshWallet())).rejects.toBeInstanceOf(RailConfigError);
    // The hot wallet exists, but it is a system account: not a mint.
    await expect(directory({ mint: chain.hotWallet.publicKey }).hasUsdcAccount(freshWallet())).rejects.toThrow(
      'USDC_MINT is not owned by a token program',
    );
  });
});

describe('associatedTokenAddress', () => {
  it("is web3.js's address for SPL Token and for Token-2022 mints", () => {
    for (let i = 0; i < 20; i++) {
      const owner = Keypair.generate().publicKey;
      const mint = Keypair.generate().publicKey;
      expect(associatedTokenAddress(owner.toBase58(), mint.toBase58())).toBe(getAssociatedTokenAddressSync(mint, owner).toBase58());
      expect(associatedTokenAddress(owner.toBase58(), mint.toBase58(), TOKEN_2022_PROGRAM)).toBe(
        getAssociatedTokenAddressSync(mint, owner, false, TOKEN_2022_PROGRAM_ID).toBase58(),
      );
    }
    expect(new PublicKey(TOKEN_2022_PROGRAM).equals(TOKEN_2022_PROGRAM_ID)).toBe(true);
  });
});
