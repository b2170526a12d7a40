/**
 * The configuration as parsed (functions/config.ts parses it): the variables (fields.ts) and the
 * rules across them, each refinement with the reason a wrong pair would cost money or lock a payer
 * out (the generated reference lists them). `Config` is the parsed configuration's type.
 */
import type * as z from 'zod';
import { fields } from './fields';

/**
 * One transfer, one credit (docs/topups.md): the watcher credits what reaches the deposit wallet and
 * x402 settle what reaches the treasury, so one wallet for both would credit a transfer twice.
 * lib/stage-config.ts refuses it at synth too, where the treasury's default (the hot wallet) shows.
 */
export const schema = fields
  .refine((c) => c.SOLANA_DEPOSIT_ADDRESS === undefined || c.SOLANA_DEPOSIT_ADDRESS !== c.X402_PAY_TO, {
    path: ['SOLANA_DEPOSIT_ADDRESS'],
    message:
      'must not be the x402 treasury (X402_PAY_TO): a transfer to it could be credited both as a top-up and as an x402 payment; ' +
      'give top-ups a deposit wallet of their own',
  })
  // WebAuthn refuses a relying party id the page's host is not under: no passkey could be made or used.
  .refine(
    (c) =>
      c.CONSOLE_RP_ID === undefined || c.PUBLIC_BASE_URL === undefined || hostIsUnder(new URL(c.PUBLIC_BASE_URL).hostname, c.CONSOLE_RP_ID),
    {
      path: ['CONSOLE_RP_ID'],
      message: "must be PUBLIC_BASE_URL's host or a domain it is under (a browser refuses any other relying party id)",
    },
  );

/** Whether `host` is `domain` or a name under it (`pay.example.com` is under `example.com`). */
export const hostIsUnder = (host: string, domain: string): boolean => host === domain || host.endsWith(`.${domain}`);

export type Config = z.infer<typeof schema>;
export type ConfigKey = keyof Config;
