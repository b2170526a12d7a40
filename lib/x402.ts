/**
 * What the x402 functions read (docs/x402.md): the settle, verify, supported and settings routes
 * (lib/http-api.ts, RouteSpec `x402`) and the reconciler, which finishes x402 settlements and
 * checks credited ones again at `finalized` (lib/payout-pipeline.ts).
 */
import type { DataStore } from './data-store';
import type { StageConfig } from './stage-config';

/** x402's CAIP-2 ids of the networks the stock `@x402/svm` accepts, and mainnet's USDC mint. */
const SOLANA_MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
const SOLANA_DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const MAINNET_USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

/**
 * What the x402 functions read (functions/config.ts NEEDS_X402): the mint, the RPC URL's secret, the
 * network, and once the operator has set them the fee payer's address and the treasury. No secret
 * value: settle alone gets the hot wallet's ARN besides (RouteSpec `x402: 'settle'`).
 */
export function x402Environment(config: StageConfig, data: DataStore): Record<string, string> {
  const payTo = config.x402PayTo ?? config.hotWalletAddress;
  return {
    USDC_MINT: config.usdcMint,
    SOLANA_RPC_URL_SECRET_ARN: data.solanaRpcUrl.secretArn,
    X402_NETWORK: config.x402Network ?? (config.usdcMint === MAINNET_USDC ? SOLANA_MAINNET : SOLANA_DEVNET),
    ...(config.hotWalletAddress ? { SOLANA_HOT_WALLET_ADDRESS: config.hotWalletAddress } : {}),
    ...(payTo ? { X402_PAY_TO: payTo } : {}),
  };
}
