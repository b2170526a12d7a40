/**
 * A payout rail double for unit-testing the worker's state machine (never shipped: the real
 * rails are functions/rails/*.rail.ts). It behaves like a network with the one property the real
 * rails rely on: a transfer is named by a reference saved through the checkpoint BEFORE it is
 * sent, and sending the same reference twice moves money once. `transfers` is the money that
 * actually moved, so a test can count payments per payout.
 */
import type { Currency } from '../../functions/core/money';
import type { PayoutInstruction, PayoutRail, RailCheckpoint, RailOutcome } from '../../functions/rails/rail';

export type FakeMode = 'complete' | 'fail' | 'pending' | 'unavailable';

export interface Transfer {
  ref: string;
  payoutId: string;
  netAmount: number;
  destination: string;
}

export class FakeRail implements PayoutRail {
  readonly transfers = new Map<string, Transfer>();
  calls = 0;
  mode: FakeMode = 'complete';
  /** One-shot: throw right after the transfer left (the answer from the network is lost). */
  crashAfterSend = false;
  private seq = 0;

  async pay(instruction: PayoutInstruction, checkpoint: RailCheckpoint): Promise<RailOutcome> {
    this.calls += 1;
    if (this.mode === 'unavailable') throw new Error('fake rail unavailable');
    if (this.mode === 'fail' && checkpoint.saved === undefined) return { kind: 'failed', reason: 'receiver account is closed' };
    let ref = typeof checkpoint.saved?.ref === 'string' ? checkpoint.saved.ref : undefined;
    if (!ref) {
      ref = `fake-${instruction.payoutId}-${++this.seq}`;
      await checkpoint.save({ rail: 'fake', ref });
    }
    if (!this.transfers.has(ref)) {
      this.transfers.set(ref, {
        ref,
        payoutId: instruction.payoutId,
        netAmount: instruction.netAmount,
        destination: instruction.destination,
      });
      if (this.crashAfterSend) {
        this.crashAfterSend = false;
        throw new Error('crash after send');
      }
    }
    if (this.mode === 'pending') return { kind: 'pending', externalId: ref };
    return { kind: 'completed', externalId: ref, txHash: `sig-${ref}` };
  }

  paymentsFor(payoutId: string): Transfer[] {
    return [...this.transfers.values()].filter((t) => t.payoutId === payoutId);
  }
}

/** `railFor` over one fake for both currencies. */
export const fakeRails = (rail: PayoutRail) => (_currency: Currency) => rail;
