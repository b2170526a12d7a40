/**
 * The hot wallet's signer as the money paths call it (DESIGN §24): one small function holds the
 * hot wallet's secret (functions/signer/, lib/signer.ts) and the money paths that need a signature
 * ask it for one: the payout worker and reconciler (a payout's transaction), the x402 settle route
 * (the fee payer's signature of a verified payment), the purchase routes and the MCP server (an
 * x402 purchase's transfer). Nothing else holds the key, and the signer signs only what it checked
 * itself (functions/signer/sign.ts).
 *
 * On AWS the signer is a Lambda function of its own (SIGNER_FUNCTION_NAME), invoked with
 * lambda:InvokeFunction, which only those functions' roles are granted. Locally (`npm start`, the
 * tests) the same signer code runs in this process behind the same interface: the local stack
 * registers it (`useInProcessSigner`), so no Lambda bundle carries it and nothing local needs AWS.
 *
 * Errors keep their meaning across the wire: a RailConfigError (no secret yet, a wrong key) is one
 * here too, so the operator alarm on the caller's log lines still fires; a refusal keeps its name.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { config, onConfigReset } from '../config';
import type { AcceptedRequirements, SignedPurchase } from '../core/purchases';
import { X402UnavailableError } from '../core/x402';
import { PlatformFundsError, RailConfigError, RailUnavailableError } from './errors';

/** The payout a payout transaction must be, exactly: the signer checks the message against it. */
export interface PayoutToSign {
  payoutId: string;
  /** The owner's wallet address (the transfer goes to its associated token account). */
  destination: string;
  /** Micro-USDC. */
  netAmount: number;
  /** The payout paid for its destination's token account: the transaction may create it. */
  createTokenAccount: boolean;
}

/** What the signer is asked. Each signature is of bytes the signer checked or built itself. */
export type SignRequest =
  /** The hot wallet's address (its public key). */
  | { kind: 'address' }
  /** A payout's legacy transaction message (base64), fee payer and transfer authority the hot wallet. */
  | { kind: 'payout'; payout: PayoutToSign; message: string }
  /** An x402 purchase's transfer, built by the signer from the accepted requirements (functions/x402/purchase-signer.ts). */
  | { kind: 'purchase'; requirements: AcceptedRequirements; signedAt: string }
  /** The fee payer's signature of an x402 payment, which the signer verifies again first. */
  | { kind: 'x402-settlement'; payload: PaymentPayload; requirements: PaymentRequirements };

/** What each kind of request answers: an address, a signature (base58) or a signed purchase. */
export interface SignResults {
  address: string;
  payout: string;
  purchase: SignedPurchase;
  'x402-settlement': string;
}

export type SignKind = SignRequest['kind'];

export interface HotWalletSigner {
  sign<R extends SignRequest>(request: R): Promise<SignResults[R['kind']]>;
}

/** The signer's answer on the wire. */
export type SignReply = { ok: true; value: unknown } | { ok: false; error: { name: string; message: string } };

/** The signer refused (a message that is not what it was said to be, …): its name and message as it threw them. */
export class SignerRefusedError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/** An error of the signer's as the caller sees it: the rails' classes stay themselves (alarms, retries). */
export function errorFromReply(error: { name: string; message: string }): Error {
  switch (error.name) {
    case 'RailConfigError':
      return new RailConfigError(error.message);
    case 'RailUnavailableError':
      return new RailUnavailableError(error.message);
    case 'PlatformFundsError':
      return new PlatformFundsError(error.message);
    case 'X402UnavailableError':
      return new X402UnavailableError();
    default:
      return new SignerRefusedError(error.name, error.message);
  }
}

type Loader = () => Promise<HotWalletSigner>;

/** The SIGNER_FUNCTION_NAME the local stack and the tests give: the in-process signer answers it. */
export const LOCAL_SIGNER_FUNCTION_NAME = 'in-process-signer';
let inProcess: Loader | undefined;
let current: HotWalletSigner | undefined;

/**
 * Local runs: the signer's own code, in this process (bin/local/stack.ts, test/support/env.ts).
 * Loaded on first use. A SIGNER_FUNCTION_NAME still wins, but for LOCAL_SIGNER_FUNCTION_NAME: what
 * the local stack gives the functions it lets invoke the signer (bin/local/signer.ts).
 */
export function useInProcessSigner(load: Loader): void {
  inProcess = load;
  current = undefined;
}

/** The hot wallet's signer: the signer function on AWS, the in-process one locally. */
export function hotWalletSigner(): HotWalletSigner {
  if (current) return current;
  const functionName = config().SIGNER_FUNCTION_NAME;
  if (functionName && functionName !== LOCAL_SIGNER_FUNCTION_NAME) {
    current = lambdaSigner(functionName);
  } else if (inProcess) {
    const load = inProcess;
    let loaded: Promise<HotWalletSigner> | undefined;
    current = {
      sign: (request) => {
        loaded ??= load().catch((error: unknown) => {
          loaded = undefined;
          throw error;
        });
        return loaded.then((signer) => signer.sign(request));
      },
    };
  } else {
    throw new RailConfigError('no hot-wallet signer: set SIGNER_FUNCTION_NAME (AWS), or run the local stack');
  }
  return current;
}
onConfigReset(() => {
  current = undefined;
  client = undefined;
});

let client: LambdaClient | undefined;

/** The signer function, invoked synchronously. Not reached or failed: not decided, the caller tries again later. */
function lambdaSigner(functionName: string): HotWalletSigner {
  return {
    async sign(request) {
      client ??= new LambdaClient({ region: config().AWS_REGION });
      let payload: Uint8Array | undefined;
      let functionError: string | undefined;
      try {
        const out = await client.send(new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from(JSON.stringify(request)) }));
        payload = out.Payload;
        functionError = out.FunctionError;
      } catch (error) {
        throw new RailUnavailableError(`hot-wallet signer ${request.kind}: not reached`, { cause: error });
      }
      const text = payload ? Buffer.from(payload).toString('utf8') : '';
      if (functionError) {
        // Lambda's own answer ({errorType, errorMessage}): a crash or a timeout, never a refusal.
        throw new RailUnavailableError(`hot-wallet signer ${request.kind} failed: ${functionError} ${text.slice(0, 500)}`);
      }
      let reply: SignReply;
      try {
        reply = JSON.parse(text) as SignReply;
      } catch {
        throw new RailUnavailableError(`hot-wallet signer ${request.kind}: unreadable answer`);
      }
      if (!reply.ok) throw errorFromReply(reply.error);
      return reply.value as never;
    },
  };
}
