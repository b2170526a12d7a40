/**
 * The hot-wallet signer as the local stack and the tests run it (DESIGN §24): the signer function's
 * own code (functions/signer/sign.ts) in this process, run *as the signer function*, so it reads
 * the hot wallet's secret from the signer's environment (bin/local/function-environments.ts), the
 * only function given it on AWS; the money paths that call it see no secret, as on AWS.
 */
import type { HotWalletSigner } from '../../functions/rails/hot-wallet-signer';
import { asFunction } from './function-scope';

export { LOCAL_SIGNER_FUNCTION_NAME } from '../../functions/rails/hot-wallet-signer';

/** The loader for `useInProcessSigner`. */
export const loadLocalSigner = async (): Promise<HotWalletSigner> => {
  const { inProcessSigner } = await import('../../functions/signer/sign');
  const signer = asFunction('signer', () => inProcessSigner());
  return { sign: (request) => asFunction('signer', () => signer.sign(request)) };
};
