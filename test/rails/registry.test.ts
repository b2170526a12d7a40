/**
 * The rail registry (functions/rails/registry.ts): rails registered by (currency, rail), looked up
 * by that key, listed per currency with what they offer; the payout implementations attached by
 * functions/rails/index.ts; and every currency's rail (core/money.ts CURRENCY_INFO) registered and
 * paying out. A new rail adds its row to the expectations here (docs/rails.md "Adding a rail").
 */
import { railsWithoutStandIn } from '../../bin/local/rails';
import { resetForTests } from '../../functions/config';
import { CURRENCIES, CURRENCY_INFO, type Currency, isCurrencyOn, isOnRail } from '../../functions/core/money';
import { railFor } from '../../functions/rails';
import { PaypalRail } from '../../functions/rails/paypal.rail';
import { lookupRail, offers, railOffering, railsOf } from '../../functions/rails/registrations';
import { payoutRailFor, registerPayout, registerRail } from '../../functions/rails/registry';
import { SolanaRail } from '../../functions/rails/solana.rail';

afterEach(() => resetForTests());

describe('the rail registry', () => {
  it('lists what each currency offers, rail by rail', () => {
    const offered = (currency: Currency) => railsOf(currency).map(({ rail, name, offers }) => ({ rail, name, offers }));
    expect(offered('USDC')).toEqual([{ rail: 'solana', name: 'Solana USDC', offers: ['payout', 'topUpByDeposit', 'tokenAccounts'] }]);
    expect(offered('USD')).toEqual([{ rail: 'paypal', name: 'PayPal USD', offers: ['payout', 'topUpByOrder'] }]);
  });

  it('looks a rail up by (currency, rail), and finds nothing for a pair never registered', () => {
    expect(lookupRail('USDC', 'solana')?.name).toBe('Solana USDC');
    expect(lookupRail('USD', 'paypal')?.name).toBe('PayPal USD');
    expect(lookupRail('USD', 'solana')).toBeUndefined();
    expect(lookupRail('USDC', 'paypal')).toBeUndefined();
  });

  it('answers what a currency offers (a USDC withdrawal checks the token account, a USD one does not)', () => {
    expect(offers('USDC', 'tokenAccounts')).toBe(true);
    expect(offers('USD', 'tokenAccounts')).toBe(false);
    expect(railOffering('USD', 'topUpByOrder')?.rail).toBe('paypal');
    expect(railOffering('USDC', 'topUpByDeposit')?.rail).toBe('solana');
    expect(railOffering('USD', 'topUpByDeposit')).toBeUndefined();
  });

  it("registers every currency's rail (core/money.ts), paying out, with a local stand-in", () => {
    for (const currency of CURRENCIES) {
      expect(lookupRail(currency, CURRENCY_INFO[currency].rail)?.offers).toContain('payout');
    }
    expect(railsWithoutStandIn()).toEqual([]);
  });

  it('gives the payout rail attached to each registration', () => {
    expect(railFor('USDC')).toBeInstanceOf(SolanaRail);
    expect(railFor('USD')).toBeInstanceOf(PaypalRail);
    expect(payoutRailFor('USDC')).toBe(railFor('USDC'));
  });

  it('refuses a (currency, rail) registered twice, and a payout for a rail that is not registered to pay', () => {
    expect(() => registerRail({ currency: 'USDC', rail: 'solana', name: 'again', offers: [] })).toThrow(
      'rail USDC/solana is registered twice',
    );
    expect(() => registerPayout('USD', 'solana', () => new PaypalRail())).toThrow('rail USD/solana is not registered to pay out');
  });

  it('has no payout rail in a function that did not import functions/rails/index.ts', () => {
    jest.isolateModules(() => {
      const light = jest.requireActual<typeof import('../../functions/rails/registrations')>('../../functions/rails/registrations');
      expect(light.railsOf('USDC')).toHaveLength(1);
      expect(() => light.payoutRailFor('USDC')).toThrow('no payout rail is attached for USDC');
    });
  });
});

describe('currency properties (core/money.ts)', () => {
  it('narrow by rail, never by spelling a currency', () => {
    const topup = { currency: 'USDC' as Currency };
    expect(isOnRail(topup, 'solana')).toBe(true);
    expect(isOnRail(topup, 'paypal')).toBe(false);
    expect(isOnRail(undefined, 'paypal')).toBe(false);
    expect(isCurrencyOn('USD', 'paypal')).toBe(true);
    expect(isCurrencyOn('EUR', 'paypal')).toBe(false);
    expect(CURRENCIES.map((c) => CURRENCY_INFO[c].method)).toEqual(['USD (PayPal)', 'USDC (Solana)']);
  });
});
