/**
 * Issue 29, low finding: a 0.000001 USDC transfer carrying someone's top-up reference completed
 * their top-up, and their real deposit then became "unmatched" (money the payer sent that an
 * operator had to credit by hand). A reference is public once anyone has seen it (a shared QR
 * code, a screen, a log), and anyone may send a transfer carrying it.
 *
 * The attacker: anyone with a wallet and the victim's reference. The property (docs/topups.md,
 * "What completes a USDC top-up"): a top-up opened with an `amount` is completed only by a transfer
 * of exactly that amount; one opened without is completed only by a transfer of at least
 * TOPUP_USDC_MIN_AMOUNT. Any other transfer carrying the reference credits nobody and is recorded
 * unmatched for the operator; the top-up stays PENDING for the payer's real deposit.
 */
import { listUnmatched } from '../../functions/store/topups/topup-watch.repository';
import { createWatcher } from '../../functions/use-cases/topups/topup-watch';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { balances, getTopup, openTopup, pay } from '../topups/support';

const t = useTestStack();
afterEach(async () => {
  await expectLedgerBalanced();
});

const watch = () => createWatcher()();

describe("a dust transfer carrying someone's top-up reference", () => {
  it('does not complete a top-up opened without an amount: the real deposit does', async () => {
    const victim = await t.fundedUser();
    const topup = (await openTopup(t, victim.key, { currency: 'USDC' })).body;
    // The attacker's transfer lands first, then the victim pays.
    const dust = await pay(t, topup.solanaPayUrl ?? '', '0.000001');
    const deposit = await pay(t, topup.solanaPayUrl ?? '', '25');
    await watch();

    expect((await getTopup(t, victim.key, topup.id)).body).toMatchObject({ status: 'COMPLETED', amount: 25, externalId: deposit });
    expect(await balances(t, victim.key)).toEqual({ USD: 0, USDC: 25 });
    const unmatched = await listUnmatched();
    expect(unmatched.find((u) => u.signature === dust)).toMatchObject({ reason: 'below minimum', amount: '1', topupId: topup.id });
    expect(unmatched.map((u) => u.signature)).not.toContain(deposit);
  });

  it('does not complete a top-up opened with an amount: only a transfer of exactly that amount does', async () => {
    const victim = await t.fundedUser();
    const opened = await openTopup(t, victim.key, { currency: 'USDC', amount: 25 });
    expect(opened.status).toBe(201);
    const topup = opened.body;
    expect(topup).toMatchObject({ status: 'PENDING', amount: 25 });
    expect(topup.solanaPayUrl).toContain('amount=25');
    // Dust, then more than the minimum but not the amount asked for, then the victim's own.
    const dust = await pay(t, topup.solanaPayUrl ?? '', '0.000001');
    const wrong = await pay(t, topup.solanaPayUrl ?? '', '2');
    const deposit = await pay(t, topup.solanaPayUrl ?? '', '25');
    await watch();

    expect((await getTopup(t, victim.key, topup.id)).body).toMatchObject({ status: 'COMPLETED', amount: 25, externalId: deposit });
    expect(await balances(t, victim.key)).toEqual({ USD: 0, USDC: 25 });
    const unmatched = await listUnmatched();
    expect(unmatched.find((u) => u.signature === dust)).toMatchObject({ reason: 'wrong amount', amount: '1', topupId: topup.id });
    expect(unmatched.find((u) => u.signature === wrong)).toMatchObject({ reason: 'wrong amount', amount: '2000000', topupId: topup.id });
  });
});
