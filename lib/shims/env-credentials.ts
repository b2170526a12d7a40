/**
 * Bundled into Lambda functions in place of `@aws-sdk/credential-provider-node` (lib/bundling.ts
 * aliases it; local runs and tests use the real package).
 *
 * Lambda always hands a function its role's credentials in environment variables. The SDK's
 * default chain would find them there first too, but it also carries the INI-file, SSO, login,
 * process, web-identity, container and IMDS providers and the STS/SSO clients they use: about
 * 130 KB of every bundle that can never run on Lambda. This provider is the chain's first link
 * and nothing else. It reads `process.env` because the SDK's own providers do; it is not
 * service configuration (that is functions/config.ts).
 */

interface EnvCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
  credentialScope?: string;
  accountId?: string;
}

export const defaultProvider = (_init?: unknown) => async (): Promise<EnvCredentials> => {
  const env = process.env;
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error('no AWS credentials in the environment (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY); Lambda always sets them');
  }
  return {
    accessKeyId,
    secretAccessKey,
    ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
    ...(env.AWS_CREDENTIAL_EXPIRATION ? { expiration: new Date(env.AWS_CREDENTIAL_EXPIRATION) } : {}),
    ...(env.AWS_CREDENTIAL_SCOPE ? { credentialScope: env.AWS_CREDENTIAL_SCOPE } : {}),
    ...(env.AWS_ACCOUNT_ID ? { accountId: env.AWS_ACCOUNT_ID } : {}),
  };
};

/** The package's two other exports, same behaviour. */
export const credentialsWillNeedRefresh = (credentials?: { expiration?: Date }): boolean => credentials?.expiration !== undefined;
export const credentialsTreatedAsExpired = (credentials?: { expiration?: Date }): boolean =>
  credentials?.expiration !== undefined && credentials.expiration.getTime() - Date.now() < 300_000;
