/**
 * Each function's environment as its Lambda is given it. The local stack runs every function in one
 * process (bin/local/stack.ts); without this, every function would read every variable the process
 * has, a test environment's approval secret included, and a function the stack gives no secret
 * would work here and answer 500 on AWS (issue 38: the console's approval links). So the stack's
 * own record of what each synthesized function gets (environments.generated.json, written by
 * `npm run docs` from the synthesized template: bin/docs/environments.ts) decides, per function,
 * which of the variables the stack hands out it sees:
 * - a variable the stack gives some function (LOG_LEVEL, PUBLIC_BASE_URL, USDC_MINT, …) only where
 *   it gives it;
 * - a secret's local form (APPROVAL_SECRET for APPROVAL_SECRET_ARN, …: LOCAL_FORMS) only where the
 *   function is given the secret's ARN *and* its role may read it, as both are needed on AWS;
 * - anything the stack never gives (DYNAMODB_ENDPOINT, LOCAL, a test's AUTH_CACHE_TTL_MS) to every
 *   function: the local machinery and tuning, not configuration the stack owns.
 */
import deployed from './environments.generated.json';

type Deployed = Record<string, { environment: readonly string[]; granted: readonly string[] }>;
const DEPLOYED: Deployed = deployed;

/**
 * What stands for a variable locally: a secret's (or a key's) value where AWS gives its ARN (or id).
 * The local value is the deployed one's: without the ARN, or without the grant to read it, a function
 * has neither.
 */
export const LOCAL_FORMS: Readonly<Record<string, readonly string[]>> = {
  ADMIN_KEY_SECRET_ARN: ['ADMIN_KEY'],
  APPROVAL_SECRET_ARN: ['APPROVAL_SECRET'],
  SOLANA_RPC_URL_SECRET_ARN: ['SOLANA_RPC_URL'],
  SOLANA_HOT_WALLET_SECRET_ARN: ['SOLANA_HOT_WALLET_SECRET'],
  PAYPAL_CREDENTIALS_SECRET_ARN: ['PAYPAL_CLIENT_ID', 'PAYPAL_CLIENT_SECRET'],
  PAYPAL_WEBHOOK_ID_SECRET_ARN: ['PAYPAL_WEBHOOK_ID'],
  WEBHOOK_KMS_KEY_ID: ['WEBHOOK_LOCAL_SECRET_KEY'],
  IDEMPOTENCY_KMS_KEY_ID: ['IDEMPOTENCY_LOCAL_SECRET_KEY'],
  RECEIPT_KMS_KEY_ID: ['RECEIPT_LOCAL_KEY'],
};

/** Every variable the stack gives some function, and the local forms of those. */
const STACK_GIVEN = new Set(
  Object.values(DEPLOYED).flatMap((fn) => fn.environment.flatMap((name) => [name, ...(LOCAL_FORMS[name] ?? [])])),
);

/** The functions the stack deploys, by the name the local stack runs them under. */
export const deployedFunctions = (): string[] => Object.keys(DEPLOYED);

/** The variables `name` is given on AWS, with the local forms of the secrets it may read. */
export function deployedVariables(name: string): Set<string> {
  const fn = DEPLOYED[name];
  if (!fn) {
    throw new Error(
      `no deployed function ${name} in bin/local/environments.generated.json (a function the stack does not deploy, or the file is stale: npm run docs)`,
    );
  }
  return new Set([...fn.environment, ...fn.granted.flatMap((variable) => LOCAL_FORMS[variable] ?? [])]);
}

/** `env` as function `name` sees it (see the file header). */
export function functionEnvironment(name: string, env: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  const own = deployedVariables(name);
  return Object.fromEntries(Object.entries(env).filter(([variable]) => !STACK_GIVEN.has(variable) || own.has(variable)));
}
