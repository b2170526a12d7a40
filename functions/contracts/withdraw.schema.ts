/**
 * POST /api/v1/agents/withdraw's body, in a module of its own: request.schemas.ts builds every
 * route's schema at load (zod calls esbuild cannot drop), the agent-name look-alike rules included,
 * and the withdraw function is the API function nearest its bundle budget.
 */
import * as z from 'zod';
import { isCurrencyOn } from '../core/money';
import { MIN_WITHDRAWAL_UNITS } from '../core/withdrawals';
import { FIELD_PROBLEMS } from '../messages/catalogue';
import { inMinorUnits, money } from './money.schemas';

export const withdrawSchema = z
  .strictObject({
    ...money,
    // The network's own rules (Solana address, PayPal account) are checked by the use case.
    walletAddress: z
      .string()
      .min(1)
      .max(256)
      .meta({
        description:
          'USDC: a Solana wallet address (base58, on the ed25519 curve; not a token account). USD: a PayPal e-mail or 13-character payer id.',
        examples: ['9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM'],
      }),
    createTokenAccount: z
      .boolean()
      .optional()
      .meta({
        description:
          'USDC only. true: a wallet without a USDC token account gets one, created by the payout for the account-creation ' +
          'fee (breakdown.accountCreationFee, 0 if the account exists). Without it such a wallet is refused.',
      }),
  })
  // A flag that would do nothing is refused, not ignored, so a client never believes it had an effect.
  .refine((body) => !(body.createTokenAccount === true && !isCurrencyOn(body.currency, 'solana')), {
    path: ['createTokenAccount'],
    message: FIELD_PROBLEMS.onlyForUsdcWithdrawals,
  })
  .transform(inMinorUnits({ units: MIN_WITHDRAWAL_UNITS, message: FIELD_PROBLEMS.atLeast(MIN_WITHDRAWAL_UNITS) }));
export type WithdrawRequest = z.infer<typeof withdrawSchema>;
