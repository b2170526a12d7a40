/**
 * One on-chain transfer is credited at most once, whichever rail credits it (issue 29): a USDC
 * top-up (its deposit wallet received it) or an x402 settlement (the treasury received it). Each
 * rail has its own credit-once guard (`TOPUPCREDIT#SOL#<signature>`, `X402TX#<messageHash>`), and
 * one guard per signature that every crediting transaction also writes (store/topups/chain-credit.ts)
 * makes them know each other. No AWS imports here.
 */

/** The rails that credit money for an on-chain transaction. */
export type ChainCreditRail = 'topup' | 'x402';

/** What the cross-rail guard records: which rail credited the transaction, to whom, how much. */
export interface ChainCredit {
  signature: string;
  rail: ChainCreditRail;
  /** Minor units (micro-USDC) credited. */
  amount: number;
  /** The top-up's payer and the top-up (rail `topup`), or the settling agent (rail `x402`). */
  userId?: string;
  topupId?: string;
  agentId?: string;
}

/**
 * The transaction was credited by another rail already: this credit must not happen. Only a
 * configuration in which a deposit wallet is also the x402 treasury (refused at config load and at
 * synth) or a transaction paying both can bring it about.
 */
export class TransferCreditedElsewhereError extends Error {
  constructor(
    readonly signature: string,
    readonly creditedBy: ChainCreditRail | 'unknown',
  ) {
    super(
      `transaction ${signature} was already credited by ${creditedBy === 'topup' ? 'a top-up' : creditedBy === 'x402' ? 'an x402 settlement' : 'another rail'}`,
    );
    this.name = 'TransferCreditedElsewhereError';
  }
}
