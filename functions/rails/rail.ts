/**
 * The rail contract, as the rails see it. Its definition is in functions/core/payout-rail.ts so the
 * store can name a checkpoint without importing a rail; this re-export keeps `rails/rail` working
 * for the rails themselves and for callers that already import it from here.
 */
export type { PayoutInstruction, PayoutRail, RailCheckpoint, RailOutcome, RailState } from '../core/payout-rail';
