/**
 * core/purchases.ts `judgeRequirements` as a plain function: each refused field is a problem as data
 * (its path below `paymentRequirements` and a catalogue code), and its 400 text is the words the
 * API has always answered, byte for byte (docs/x402.md "Buying").
 */
import { judgeRequirements, MAX_MEMO_BYTES, type PurchaseSettings } from '../../functions/core/purchases';

const HOT = 'Hot1111111111111111111111111111111111111111';
const PAY_TO = '3Ujc6pW8vXsLfWqX1fGxG9m7mNh1vJ6yXg2CQRh4X5pN';
const FEE_PAYER = '2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4';
const MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

const settings: PurchaseSettings = {
  network: 'solana:devnet',
  usdcMint: MINT,
  serviceKeys: [HOT],
  minimum: 10_000,
  maximum: 1_000_000_000,
  isAddress: (text) => /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(text),
};

const good = {
  scheme: 'exact',
  network: 'solana:devnet',
  asset: MINT,
  amount: '10000',
  payTo: PAY_TO,
  maxTimeoutSeconds: 60,
  extra: { feePayer: FEE_PAYER },
};

describe('judgeRequirements', () => {
  it('accepts the exact scheme on the network in its USDC, rebuilt from the checked fields only', () => {
    const verdict = judgeRequirements({ ...good, extra: { feePayer: FEE_PAYER, recentBlockhash: 'x' } }, settings);
    expect(verdict).toEqual({ ok: true, amount: 10_000, accepted: good });
  });

  it.each<[string, unknown, string, string, string]>([
    ['not an object', [], '', 'notObject', 'paymentRequirements: must be a JSON object'],
    ['an unknown field', { ...good, price: 1 }, '.price', 'unknownField', 'paymentRequirements.price: unknown field'],
    ['another scheme', { ...good, scheme: 'upto' }, '.scheme', 'unsupportedScheme', 'paymentRequirements.scheme: unsupported scheme'],
    [
      'another network',
      { ...good, network: 'solana:mainnet' },
      '.network',
      'unsupportedNetwork',
      'paymentRequirements.network: unsupported network',
    ],
    ['another asset', { ...good, asset: PAY_TO }, '.asset', 'unsupportedAsset', 'paymentRequirements.asset: unsupported asset'],
    [
      'a decimal amount',
      { ...good, amount: '1.5' },
      '.amount',
      'atomicUnits',
      'paymentRequirements.amount: must be a positive integer of atomic units',
    ],
    ['too much', { ...good, amount: '1000000001' }, '.amount', 'aboveMaximum', 'paymentRequirements.amount: exceeds the maximum amount'],
    ['too little', { ...good, amount: '9999' }, '.amount', 'belowMinimum', 'paymentRequirements.amount: below the minimum amount'],
    ['a bad payTo', { ...good, payTo: 'x' }, '.payTo', 'invalidAddress', 'paymentRequirements.payTo: invalid address'],
    ['payTo the service', { ...good, payTo: HOT }, '.payTo', 'payToIsService', 'pay agents of this service with a charge'],
    [
      'a day and a second',
      { ...good, maxTimeoutSeconds: 86_401 },
      '.maxTimeoutSeconds',
      'timeout',
      'paymentRequirements.maxTimeoutSeconds: must be an integer from 1 to 86400',
    ],
    ['no extra', { ...good, extra: null }, '.extra.feePayer', 'required', 'paymentRequirements.extra.feePayer: required'],
    ['no fee payer', { ...good, extra: {} }, '.extra.feePayer', 'required', 'paymentRequirements.extra.feePayer: required'],
    [
      'a bad fee payer',
      { ...good, extra: { feePayer: 1 } },
      '.extra.feePayer',
      'invalidAddress',
      'paymentRequirements.extra.feePayer: invalid address',
    ],
    [
      'the service pays the fee',
      { ...good, extra: { feePayer: HOT } },
      '.extra.feePayer',
      'serviceKey',
      'paymentRequirements.extra.feePayer: must not be a key of this service',
    ],
    [
      'the seller pays its own fee',
      { ...good, extra: { feePayer: PAY_TO } },
      '.extra.feePayer',
      'feePayerIsPayTo',
      'paymentRequirements.extra.feePayer: must not be payTo',
    ],
    [
      'an empty memo',
      { ...good, extra: { feePayer: FEE_PAYER, memo: '' } },
      '.extra.memo',
      'memoBytes',
      'paymentRequirements.extra.memo: must be a string of 1 to 256 bytes',
    ],
  ])('refuses %s: the field and code as data, the words as they were', (_, input, field, code, message) => {
    const verdict = judgeRequirements(input, settings);
    expect(verdict).toMatchObject({ ok: false, problem: { field, code }, message });
  });

  it('words a memo past the limit with the limit', () => {
    const verdict = judgeRequirements({ ...good, extra: { feePayer: FEE_PAYER, memo: 'é'.repeat(MAX_MEMO_BYTES / 2 + 1) } }, settings);
    expect(verdict).toMatchObject({ ok: false, problem: { field: '.extra.memo', code: 'memoBytes', args: [MAX_MEMO_BYTES] } });
  });
});
