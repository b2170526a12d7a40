/**
 * The one configuration module. It parses `process.env` with zod once, at cold start, and fails
 * loudly when a value is missing or malformed. Nothing else in the service reads `process.env`.
 *
 * The entry point of config/: the variables (config/fields.ts), the parsed schema and its rules
 * (config/schema.ts) and what each kind of function needs (config/needs.ts) are named from here,
 * so every function imports its configuration from this one module.
 */
import { fields } from './config/fields';
import type { ConfigNeed, RequiredConfig } from './config/needs';
import { type Config, schema } from './config/schema';

export {
  DEFAULT_MAX_AMOUNT,
  MAX_ACCOUNT_CREATION_FEE,
  MAX_SOLANA_COMPUTE_UNIT_LIMIT,
  MAX_SOLANA_PRIORITY_FEE_MICROLAMPORTS,
  MAX_TOPUP_USDC_MIN_AMOUNT,
  MIN_SOLANA_COMPUTE_UNIT_LIMIT,
} from './config/fields';
export {
  type ConfigNeed,
  NEEDS_ADMIN_AUTH,
  NEEDS_ADMIN_KEY,
  NEEDS_APPROVAL_SECRET,
  NEEDS_HOT_WALLET_SIGNER,
  NEEDS_PAYOUT_QUEUE,
  NEEDS_PAYPAL_ORDERS,
  NEEDS_PAYPAL_WEBHOOK,
  NEEDS_PUBLIC_BASE_URL,
  NEEDS_RAILS,
  NEEDS_RECEIPTS,
  NEEDS_SEALED_ANSWERS,
  NEEDS_SIGNER,
  NEEDS_TOPUP_WATCHER,
  NEEDS_USDC_TOPUPS,
  NEEDS_WEBHOOK_QUEUE,
  NEEDS_WEBHOOK_SECRETS,
  NEEDS_WITHDRAWALS,
  NEEDS_X402,
  NEEDS_X402_REFUNDS,
  NEEDS_X402_SETTLE,
  type RequiredConfig,
} from './config/needs';
export { type Config, type ConfigKey, hostIsUnder } from './config/schema';

/** A function's environment does not give it what it needs; thrown during the function's init. */
export class ConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}

let cached: Config | undefined;

/**
 * One process running many functions (bin/local: `npm start` and the service tests): the name of
 * the function whose code runs now, and the environment its Lambda is given on AWS. Unset on AWS,
 * where each function is a process of its own and reads `process.env`.
 */
interface FunctionEnvironments {
  current: () => string | undefined;
  environment: (name: string) => Readonly<Record<string, string | undefined>>;
}
let functionEnvironments: FunctionEnvironments | undefined;
/** Each function's parsed configuration (with `functionEnvironments`), until `resetForTests`. */
const byFunction = new Map<string, Config>();

/**
 * For the local runner (bin/local/stack.ts): from now on a function's code (`current()` names it)
 * reads its own environment, `environment(name)`, as its Lambda would; code outside any function
 * (tests, scripts) keeps `process.env`. Returns what undoes it (the previous one again).
 */
export function useFunctionEnvironments(given: FunctionEnvironments): () => void {
  const previous = functionEnvironments;
  functionEnvironments = given;
  byFunction.clear();
  return () => {
    if (functionEnvironments === given) functionEnvironments = previous;
    byFunction.clear();
  };
}

function parse(env: Readonly<Record<string, string | undefined>>, name?: string): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => {
      const key = i.path.join('.');
      return env[key] === undefined ? `${key} is not set` : `${key}: ${i.message}`;
    });
    throw new ConfigurationError(`invalid configuration${name ? ` of ${name}` : ''}: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/**
 * Parses the shared base and checks what this function needs on top of it, throwing a
 * ConfigurationError that names every missing or malformed variable. Each Lambda entry calls it at
 * module scope (functions/http/handler.ts for the routes), so a bad environment fails the init
 * instead of every request. `require` may depend on the parsed values (NEEDS_ADMIN_AUTH).
 */
export function loadConfig(options: { require?: RequiredConfig } = {}): Config {
  const cfg = config();
  const needs = typeof options.require === 'function' ? options.require(cfg) : (options.require ?? []);
  const missing = needs.filter((need) => !satisfied(cfg, need)).map(describeNeed);
  if (missing.length > 0) throw new ConfigurationError(`missing configuration: ${missing.join('; ')}`);
  return cfg;
}

/** The parsed configuration. Lambda entries have parsed it at init (`loadConfig`); scripts and
 * tests that call this first get it parsed here, with the same errors. */
export function config(): Config {
  const name = functionEnvironments?.current();
  if (functionEnvironments && name !== undefined) {
    let own = byFunction.get(name);
    if (!own) {
      own = parse(functionEnvironments.environment(name), name);
      byFunction.set(name, own);
    }
    return own;
  }
  cached ??= parse(process.env);
  return cached;
}

/**
 * A value a module keeps for the configuration it was made from (a secret read once, the secrets
 * it decrypted): one per parsed configuration, so one per container on AWS and one per function
 * where one process runs them all (`useFunctionEnvironments`): a function never finds what another
 * function's configuration made, a secret it is not given. `resetForTests` empties every slot.
 */
export interface ConfigSlot<T> {
  get(): T | undefined;
  set(value: T | undefined): void;
}

export function configSlot<T>(): ConfigSlot<T> {
  const values = new WeakMap<Config, T>();
  return {
    get: () => values.get(config()),
    set: (value) => {
      if (value === undefined) values.delete(config());
      else values.set(config(), value);
    },
  };
}

/** The parsed configuration, or undefined when it does not parse: for code that must work even then
 * (the logger, the error serializer, the metrics switch). */
export function tryConfig(): Config | undefined {
  try {
    return config();
  } catch {
    return undefined;
  }
}

function satisfied(cfg: Config, need: ConfigNeed): boolean {
  if (typeof need === 'string') return cfg[need] !== undefined;
  return need.oneOf.some((keys) => keys.every((key) => cfg[key] !== undefined));
}

function describeNeed(need: ConfigNeed): string {
  if (typeof need === 'string') return `${need} is not set`;
  return `set ${need.oneOf.map((keys) => keys.join(' and ')).join(' or ')}`;
}

const resets: (() => void)[] = [];

/**
 * Registers what a module derives from the configuration (a client, a cache, a rail), so that
 * `resetForTests` drops it too. Called once at module scope by each such module.
 */
export function onConfigReset(reset: () => void): void {
  resets.push(reset);
}

/**
 * The one reset hook, for tests and the local runner: after changing `process.env`, forget the
 * parsed configuration and everything built from it (clients, caches, rails, the admin key), so
 * the next use reads the environment again.
 */
export function resetForTests(): void {
  cached = undefined;
  byFunction.clear();
  for (const reset of resets) reset();
}

/** The variables themselves, for the generated configuration reference (bin/docs/configuration.ts). */
export const CONFIG_FIELDS = fields;
