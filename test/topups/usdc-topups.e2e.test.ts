/**
 * USDC top-ups by Solana Pay, end to end against the local stack: a real signed SPL transfer on
 * LiteSVM pays the `solanaPayUrl`, the watcher finds it by its reference and credits exactly what
 * arrived, once per signature, only at `finalized`. Faults: the watcher dying before and after the
 * crediting transaction, the same signature seen twice, two watchers at once. Payments that match
 * no top-up (no reference, an expired one, a completed one, a wrong mint) are recorded, never
 * dropped. The ledger audit (which counts completed top-ups as credits) holds after every test.
 */
import { PaymentAlreadyCreditedError } from '../../functions/core/topups';
import { SolanaDepositsClient } from '../../functions/rails/solana.deposits';
import { getTopup as readTopupItem } from '../../functions/store/topups/topup.repository';
import { listUnmatched } from '../../functions/store/topups/topup-watch.repository';
import { creditOnce } from '../../functions/use-cases/topups/topup-credit';
import { createWatcher } from '../../functions/use-cases/topups/topup-watch';
import { crash, inject } from '../faults/inject';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { balances, getTopup, openTopup, otherMint, pay, spamReference } from './support';

const t = useTestStack();

afterEach(async () => {
  await expectLedgerBalanced();
});

const watch = (options: Parameters<typeof createWatcher>[0] = {}) => createWatcher(options)();

/** The RPC methods `work` called through `solana`, by name. */
async function watchCalls(solana: SolanaDepositsClient, work: () => Promise<unknown>): Promise<Record<string, number>> {
  const counts: Record<string, number> = { getSignaturesForAddress: 0, getTransaction: 0 };
  const signaturesFor = solana.signaturesFor.bind(solana);
  const finalizedTransaction = solana.finalizedTransaction.bind(solana);
  solana.signaturesFor = (...args) => {
    counts.getSignaturesForAddress = (counts.getSignaturesForAddress ?? 0) + 1;
    return signaturesFor(...args);
  };
  solana.finalizedTransaction = (...args) => {
    counts.getTransaction = (counts.getTransaction ?? 0) + 1;
    return finalizedTransaction(...args);
  };
  try {
    await work();
  } finally {
    solana.signaturesFor = signaturesFor;
    solana.finalizedTransaction = finalizedTransaction;
  }
  return counts;
}

async function usdcTopup() {
  const user = await t.fundedUser();
  const res = await openTopup(t, user.key, { currency: 'USDC' });
  expect(res.status).toBe(201);
  return { user, topup: res.body };
}

describe('USDC top-up by Solana Pay', () => {
  it('answers the deposit address, a fresh reference and a Solana Pay URL', async () => {
    const { topup } = await usdcTopup();
    const { solana } = t.stack.rails;
    expect(topup).toMatchObject({
      currency: 'USDC',
      status: 'PENDING',
      network: 'SOL',
      address: solana.depositWallet,
      amount: null,
      externalId: null,
    });
    expect(topup.solanaPayUrl).toBe(
      `solana:${solana.depositWallet}?spl-token=${solana.mint}&reference=${topup.reference}&label=Agent%20Payment%20Service&message=Top%20up%20your%20balance`,
    );
    const other = await usdcTopup();
    expect(other.topup.reference).not.toBe(topup.reference);
  });

  it('credits exactly the amount a real signed transfer delivered, once finalized, in one run', async () => {
    const { user, topup } = await usdcTopup();
    const signature = await pay(t, topup.solanaPayUrl ?? '', '12.345678');
    const report = await watch();
    expect(report.completed).toBeGreaterThanOrEqual(1);
    const after = (await getTopup(t, user.key, topup.id)).body;
    expect(after).toMatchObject({ status: 'COMPLETED', amount: 12.345678, externalId: signature });
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 12.345678 });
    // Seen again by the next runs: nothing more.
    await watch();
    await watch();
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 12.345678 });
  });

  it('waits for finalized: a processed transfer is not credited until it is final', async () => {
    const { user, topup } = await usdcTopup();
    t.stack.rails.solana.holdConfirmations(true);
    try {
      await pay(t, topup.solanaPayUrl ?? '', '3');
      await watch();
      expect((await getTopup(t, user.key, topup.id)).body.status).toBe('PENDING');
      expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 0 });
    } finally {
      t.stack.rails.solana.holdConfirmations(false);
    }
    await watch();
    expect((await getTopup(t, user.key, topup.id)).body).toMatchObject({ status: 'COMPLETED', amount: 3 });
  });

  it('a watcher that dies before its crediting transaction credits nothing; the next run credits once', async () => {
    const { user, topup } = await usdcTopup();
    await pay(t, topup.solanaPayUrl ?? '', '5');
    const died = await watch({
      checkpoint: (step) => {
        if (step === 'before-credit') throw new Error('injected crash: the watcher died here');
      },
    });
    expect(died.errors).toBeGreaterThanOrEqual(1);
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 0 });
    await watch();
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 5 });
  });

  it('a crediting transaction that fails (DynamoDB gives up) credits nothing; the next attempt credits once', async () => {
    const { user, topup } = await usdcTopup();
    await pay(t, topup.solanaPayUrl ?? '', '6');
    const fault = inject({
      command: 'TransactWriteItemsCommand',
      match: (input) => JSON.stringify(input).includes('TOPUPCREDIT#'),
      times: 1,
      error: crash,
    });
    try {
      await watch();
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBe(1);
    // The reference scan's attempt failed; the deposit scan, later in the same run, credited it.
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 6 });
    await watch();
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 6 });
  });

  it('a watcher that dies right after its transaction committed leaves it credited once', async () => {
    const { user, topup } = await usdcTopup();
    await pay(t, topup.solanaPayUrl ?? '', '7');
    const { db } = await import('../../functions/store/client');
    const name = 'die-after-commit';
    db().middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'TransactWriteItemsCommand' && JSON.stringify(args.input).includes('TOPUPCREDIT#')) {
          throw new Error('injected crash after commit');
        }
        return out;
      },
      { step: 'initialize', name },
    );
    try {
      const died = await watch();
      expect(died.errors).toBeGreaterThanOrEqual(1);
    } finally {
      db().middlewareStack.remove(name);
    }
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 7 });
    await watch();
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 7 });
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('COMPLETED');
  });

  it('the same signature credited twice (to the same or another top-up) moves money once', async () => {
    const { user, topup } = await usdcTopup();
    const signature = await pay(t, topup.solanaPayUrl ?? '', '2');
    await watch();
    const second = await usdcTopup();
    const item = await readTopupItem(second.user.id, second.topup.id);
    if (!item) throw new Error('top-up item missing');
    const outcome = await creditOnce(item, { rail: 'SOL', externalId: signature, amount: 2_000_000, currency: 'USDC' });
    expect(outcome).toBe('already-credited');
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 2 });
    expect(await balances(t, second.user.key)).toEqual({ USD: 0, USDC: 0 });
    expect((await getTopup(t, second.user.key, second.topup.id)).body.status).toBe('PENDING');
    expect(PaymentAlreadyCreditedError).toBeDefined();
  });

  it('two watchers at once credit a payment once', async () => {
    const { user, topup } = await usdcTopup();
    await pay(t, topup.solanaPayUrl ?? '', '4.5');
    const reports = await Promise.all([watch(), watch(), watch()]);
    expect(reports.reduce((n, r) => n + r.errors, 0)).toBe(0);
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 4.5 });
    expect((await getTopup(t, user.key, topup.id)).body).toMatchObject({ status: 'COMPLETED', amount: 4.5 });
  });

  it('records a transfer without a reference for an operator, never drops it', async () => {
    const { topup } = await usdcTopup();
    const signature = await pay(t, topup.solanaPayUrl ?? '', '1.25', { withoutReference: true });
    await watch();
    const unmatched = await listUnmatched();
    expect(unmatched.find((u) => u.signature === signature)).toMatchObject({ reason: 'no reference', amount: '1250000' });
    await watch();
    expect((await listUnmatched()).filter((u) => u.signature === signature)).toHaveLength(1);
  });

  it('records a payment to an expired top-up, and a second payment to a completed one', async () => {
    const { user, topup } = await usdcTopup();
    // A run far in the future expires it (no payment arrived).
    const later = new Date(Date.now() + 2 * 3600_000);
    await watch({ now: () => later });
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('EXPIRED');
    const late = await pay(t, topup.solanaPayUrl ?? '', '1');
    const paid = await usdcTopup();
    await pay(t, paid.topup.solanaPayUrl ?? '', '1');
    await watch();
    const again = await pay(t, paid.topup.solanaPayUrl ?? '', '2');
    await watch();
    const unmatched = await listUnmatched();
    expect(unmatched.find((u) => u.signature === late)).toMatchObject({ reason: 'expired reference', topupId: topup.id });
    expect(unmatched.find((u) => u.signature === again)).toMatchObject({ reason: 'top-up already completed', topupId: paid.topup.id });
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 0 });
    expect(await balances(t, paid.user.key)).toEqual({ USD: 0, USDC: 1 });
  });

  it('records a wrong-mint payment carrying the reference, and credits nothing', async () => {
    const { user, topup } = await usdcTopup();
    const mint = await otherMint(t);
    const signature = await pay(t, topup.solanaPayUrl ?? '', '9', { mintOverride: mint });
    await watch();
    expect((await listUnmatched()).find((u) => u.signature === signature)).toMatchObject({ reason: 'wrong mint', mint, amount: '9000000' });
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('PENDING');
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 0 });
  });

  it('25 cheap transactions carrying the reference after the payment do not hide it: credited exactly once', async () => {
    const { user, topup } = await usdcTopup();
    const signature = await pay(t, topup.solanaPayUrl ?? '', '8.5');
    const spam = await spamReference(t, topup.reference ?? '', 25);
    expect(new Set(spam).size).toBe(25);
    const report = await watch();
    expect(report.errors).toBe(0);
    expect((await getTopup(t, user.key, topup.id)).body).toMatchObject({ status: 'COMPLETED', amount: 8.5, externalId: signature });
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 8.5 });
    await watch();
    await watch();
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 8.5 });
    // The spam paid nothing in: nothing for an operator either.
    const unmatched = await listUnmatched();
    expect(unmatched.filter((u) => [signature, ...spam].includes(u.signature))).toEqual([]);
  });

  it('pages through the reference in small pages, and spam before a payment is read once, not every run', async () => {
    const { user, topup } = await usdcTopup();
    await spamReference(t, topup.reference ?? '', 12);
    const solana = new SolanaDepositsClient(async () => t.stack.rails.solana.url);
    const first = await watch({ solana, referencePageSize: 5 });
    expect(first.errors).toBe(0);
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('PENDING');
    // Later runs start after what was resolved: one signatures call for the reference, no transaction read again.
    const calls = solana.calls;
    const second = await watch({ solana, referencePageSize: 5 });
    expect(second.pending).toBeGreaterThanOrEqual(1);
    const perTopup = await watchCalls(solana, () => watch({ solana, referencePageSize: 5 }));
    expect(solana.calls - calls).toBeLessThan(first.rpcCalls);
    expect(perTopup.getTransaction).toBe(0);
    const signature = await pay(t, topup.solanaPayUrl ?? '', '2');
    await spamReference(t, topup.reference ?? '', 7);
    await watch({ solana, referencePageSize: 5 });
    expect((await getTopup(t, user.key, topup.id)).body).toMatchObject({ status: 'COMPLETED', amount: 2, externalId: signature });
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 2 });
  });

  it('a payment the reference scan cannot reach is credited by the deposit scan, never passed over', async () => {
    const { user, topup } = await usdcTopup();
    const signature = await pay(t, topup.solanaPayUrl ?? '', '3.25');
    // The node fails every signatures request for this reference (a provider outage for one address).
    const solana = new (class extends SolanaDepositsClient {
      override async signaturesFor(address: string, opts: Parameters<SolanaDepositsClient['signaturesFor']>[1]) {
        if (address === topup.reference) throw new Error('injected: the node cannot list this reference');
        return super.signaturesFor(address, opts);
      }
    })(async () => t.stack.rails.solana.url);
    const report = await watch({ solana });
    expect(report.errors).toBeGreaterThanOrEqual(1);
    expect((await getTopup(t, user.key, topup.id)).body).toMatchObject({ status: 'COMPLETED', amount: 3.25, externalId: signature });
    await watch();
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 3.25 });
  });

  it('a completed top-up costs a bounded number of RPC calls', async () => {
    // Settle whatever earlier tests left pending, so this run sees one top-up.
    await watch({ now: () => new Date(Date.now() + 3 * 3600_000) });
    const { topup } = await usdcTopup();
    await pay(t, topup.solanaPayUrl ?? '', '1');
    const solana = new SolanaDepositsClient(async () => t.stack.rails.solana.url);
    const report = await watch({ solana });
    expect(report.completed).toBe(1);
    // getSignaturesForAddress(reference) + getTransaction + getSignaturesForAddress(deposit account)
    expect(report.rpcCalls).toBeLessThanOrEqual(3);
  });
});
