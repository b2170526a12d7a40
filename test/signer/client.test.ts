/**
 * The money paths' side of the hot-wallet signer (functions/rails/hot-wallet-signer.ts): on AWS a
 * Lambda invocation whose answer keeps its meaning (an operator's RailConfigError stays one, so
 * its alarm fires on the caller's lines; a refusal keeps its name; a crash is not decided).
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { resetForTests } from '../../functions/config';
import { RailConfigError, RailUnavailableError } from '../../functions/rails/errors';
import { hotWalletSigner, SignerRefusedError } from '../../functions/rails/hot-wallet-signer';

const answer = (reply: unknown, functionError?: string) =>
  jest.spyOn(LambdaClient.prototype, 'send').mockImplementation(async () => ({
    Payload: Buffer.from(JSON.stringify(reply)),
    ...(functionError ? { FunctionError: functionError } : {}),
  }));

describe('the hot-wallet signer, invoked', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    process.env.SIGNER_FUNCTION_NAME = 'agent-payment-service-test-signer';
    resetForTests();
  });
  afterEach(() => {
    jest.restoreAllMocks();
    process.env = { ...saved };
    resetForTests();
  });

  it('invokes the function named by SIGNER_FUNCTION_NAME with the request, and answers its value', async () => {
    const send = answer({ ok: true, value: 'HotWa11et' });
    expect(await hotWalletSigner().sign({ kind: 'address' })).toBe('HotWa11et');
    const command = send.mock.calls[0]?.[0] as InvokeCommand;
    expect(command).toBeInstanceOf(InvokeCommand);
    expect(command.input.FunctionName).toBe('agent-payment-service-test-signer');
    expect(JSON.parse(Buffer.from(command.input.Payload as Uint8Array).toString())).toEqual({ kind: 'address' });
  });

  it("rebuilds the operator's RailConfigError, and keeps a refusal's name", async () => {
    answer({ ok: false, error: { name: 'RailConfigError', message: 'SOLANA_HOT_WALLET_SECRET_ARN: secret has no value yet' } });
    await expect(hotWalletSigner().sign({ kind: 'address' })).rejects.toBeInstanceOf(RailConfigError);
    jest.restoreAllMocks();
    answer({ ok: false, error: { name: 'UncheckedPayoutError', message: 'the hot wallet signs only the payout’s transfer: amount' } });
    const refused = await hotWalletSigner()
      .sign({ kind: 'address' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SignerRefusedError);
    expect((refused as Error).name).toBe('UncheckedPayoutError');
  });

  it('takes a crash, a timeout or no answer as not decided (RailUnavailableError: the caller tries again)', async () => {
    answer({ errorType: 'Sandbox.Timedout', errorMessage: 'Task timed out' }, 'Unhandled');
    await expect(hotWalletSigner().sign({ kind: 'address' })).rejects.toBeInstanceOf(RailUnavailableError);
    jest.restoreAllMocks();
    jest.spyOn(LambdaClient.prototype, 'send').mockImplementation(async () => {
      throw new Error('TooManyRequestsException');
    });
    await expect(hotWalletSigner().sign({ kind: 'address' })).rejects.toBeInstanceOf(RailUnavailableError);
  });
});
