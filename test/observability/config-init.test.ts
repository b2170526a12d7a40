/**
 * Configuration is parsed when a function's module loads (functions/config.ts `loadConfig`), so a
 * function whose environment lacks something fails its init, naming it, instead of every request.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { needsExport } from '../../bin/registry/needs';
import { type Config, type ConfigNeed, resetForTests } from '../../functions/config';
import { OPERATIONS } from '../../functions/operations/all';
import * as NEEDS from '../../functions/registry/needs.generated';
import { configNeeds, handlerEntry, ROUTES, recognisesAdmin, routeNamed } from '../../functions/registry/routes';
import { INIT_ENV } from '../support/init-env';

const saved = { ...process.env };

/**
 * The packages functions/ imports, each loaded once here and handed to every fresh registry below
 * as it is: a fresh registry then evaluates the whole of functions/ again (each handler's init, its
 * config module, every module it imports) but not zod, the AWS SDK or the chain libraries again,
 * which were most of a route's load (~250 ms a route, over a hundred loads). No package reads our
 * configuration: functions/config.ts is the only reader of the environment (nothing in functions/
 * names process.env) and it is loaded fresh with the rest of functions/.
 */
function shareImportedPackages(): void {
  const root = path.resolve(__dirname, '..', '..', 'functions');
  const specifiers = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith('.ts'))
        for (const [, spec] of readFileSync(file, 'utf8').matchAll(/^import (?!type )[^;]*? from '([^.'][^']*)';$/gms))
          if (spec !== undefined && !spec.startsWith('node:')) specifiers.add(spec);
    }
  };
  walk(root);
  for (const spec of specifiers) {
    let loaded: unknown;
    try {
      loaded = jest.requireActual(spec);
    } catch {
      continue; // types only (aws-lambda): nothing to share
    }
    jest.doMock(spec, () => loaded);
  }
}
shareImportedPackages();

afterEach(() => {
  process.env = { ...saved };
  resetForTests();
});

/** Loads a module in a fresh module registry with exactly the test environment changed by `env`;
 * `resetForTests` is that registry's own. */
function load(file: string, env: Record<string, string | undefined>): { mod: unknown; resetForTests: () => void } {
  process.env = { ...saved, ADMIN_KEY: undefined, ...env };
  for (const [name, value] of Object.entries(process.env)) if (value === undefined) delete process.env[name];
  let loaded: { mod: unknown; resetForTests: () => void } | undefined;
  jest.isolateModules(() => {
    const mod: unknown = require(file);
    loaded = { mod, resetForTests: require('../../functions/config').resetForTests };
  });
  if (!loaded) throw new Error(`${file} did not load`);
  return loaded;
}

/**
 * Loads a module several times in ONE fresh module registry, once per environment, and returns
 * what each load threw, or the module. A module that throws while it loads is dropped from the
 * registry (Node's rule, and Jest's), so the next load evaluates it again, with the next
 * environment, while its dependencies stay loaded: each further load costs the module's own init
 * (where a handler calls `loadConfig`), not the whole graph's. Only the last load may succeed (a
 * loaded module would be handed back from the registry as it is).
 */
function loadSeries(file: string, envs: Record<string, string | undefined>[]): ({ name: string; message: string } | { mod: unknown })[] {
  const results: ({ name: string; message: string } | { mod: unknown })[] = [];
  jest.isolateModules(() => {
    envs.forEach((env, i) => {
      process.env = { ...saved, ADMIN_KEY: undefined, ...env };
      for (const [name, value] of Object.entries(process.env)) if (value === undefined) delete process.env[name];
      require('../../functions/config').resetForTests();
      try {
        results.push({ mod: require(file) as unknown });
      } catch (error) {
        results.push(error as Error);
        return;
      }
      if (i < envs.length - 1) throw new Error(`${file} loaded with ${JSON.stringify(env)}, before the last environment`);
    });
  });
  return results;
}

/** What loading throws: a ConfigurationError (each load has its own copy of the class, so by name). */
function loadError(file: string, env: Record<string, string | undefined>): { name: string; message: string } {
  try {
    load(file, env);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`${file} loaded without ${JSON.stringify(env)}`);
}

const api = (name: string) => `../../functions/api/${name}.handler`;

/** The stage recognises the operator by key (its needs include the admin key's). */
const KEY_AUTH = { ADMIN_AUTH: 'key' } as Config;

/** Every variable any alternative of a need names. */
const namesOf = (need: ConfigNeed): readonly string[] => (typeof need === 'string' ? [need] : need.oneOf.flat());

/** The variables the stack sets for a need: on AWS, the last alternative (a secret's ARN, where there is one). */
const awsForm = (need: ConfigNeed): readonly string[] => (typeof need === 'string' ? [need] : (need.oneOf[need.oneOf.length - 1] ?? []));

const placeholder = (name: string): string =>
  name in INIT_ENV
    ? INIT_ENV[name as keyof typeof INIT_ENV]
    : name.endsWith('_ARN')
      ? `arn:aws:secretsmanager:us-east-1:000000000000:secret:${name.toLowerCase()}`
      : `placeholder-${name.toLowerCase()}`;

/** The test environment without anything any route's needs name: each route gets exactly its own. */
const CLEARED = Object.fromEntries(
  ROUTES.flatMap((route) => configNeeds(route)(KEY_AUTH).flatMap(namesOf)).map((name) => [name, undefined]),
);

describe('a function with an incomplete environment', () => {
  it('fails at import, naming TABLE_NAME, when the table is not configured', () => {
    const error = loadError(api('health'), { TABLE_NAME: undefined });
    expect(error.name).toBe('ConfigurationError');
    expect(error.message).toMatch(/TABLE_NAME is not set/);
  });

  it('names a malformed value too', () => {
    expect(() => load(api('health'), { MAX_AMOUNT: 'lots' })).toThrow(/MAX_AMOUNT/);
  });

  it('withdraw refuses to load without PAYOUT_QUEUE_URL instead of answering 200 and only logging', () => {
    const withdrawEnv = {
      PAYOUT_QUEUE_URL: INIT_ENV.PAYOUT_QUEUE_URL,
      USDC_MINT: INIT_ENV.USDC_MINT,
      SOLANA_RPC_URL: INIT_ENV.SOLANA_RPC_URL,
    };
    // Nor without the chain it asks whether a USDC wallet has its token account.
    const [noQueue, noChain, noMint, loaded] = loadSeries(api('withdraw'), [
      { ...withdrawEnv, PAYOUT_QUEUE_URL: undefined },
      { ...withdrawEnv, SOLANA_RPC_URL: undefined },
      { ...withdrawEnv, USDC_MINT: undefined },
      withdrawEnv,
    ]);
    expect(noQueue).toMatchObject({ message: expect.stringMatching(/PAYOUT_QUEUE_URL is not set/) });
    expect(noChain).toMatchObject({ message: expect.stringMatching(/set SOLANA_RPC_URL or SOLANA_RPC_URL_SECRET_ARN/) });
    expect(noMint).toMatchObject({ message: expect.stringMatching(/USDC_MINT is not set/) });
    expect((loaded as { mod?: unknown }).mod).toHaveProperty('handler');
  });

  it('the payout worker and the reconciler refuse to load without the rails or the queue they use', () => {
    const worker = '../../functions/payout-worker/handler';
    const reconciler = '../../functions/reconciler/handler';
    const [workerNoChain, workerNoPayPal, workerLoaded] = loadSeries(worker, [
      { ...INIT_ENV, SOLANA_RPC_URL: undefined },
      { ...INIT_ENV, PAYPAL_CLIENT_SECRET: undefined },
      INIT_ENV,
    ]);
    expect(workerNoChain).toMatchObject({ message: expect.stringMatching(/set SOLANA_RPC_URL or SOLANA_RPC_URL_SECRET_ARN/) });
    expect(workerNoPayPal).toMatchObject({
      message: expect.stringMatching(/set PAYPAL_CLIENT_ID and PAYPAL_CLIENT_SECRET or PAYPAL_CREDENTIALS_SECRET_ARN/),
    });
    expect((workerLoaded as { mod?: unknown }).mod).toHaveProperty('handler');
    const [reconcilerNoQueue, reconcilerLoaded] = loadSeries(reconciler, [{ ...INIT_ENV, PAYOUT_QUEUE_URL: undefined }, INIT_ENV]);
    expect(reconcilerNoQueue).toMatchObject({ message: expect.stringMatching(/PAYOUT_QUEUE_URL is not set/) });
    expect((reconcilerLoaded as { mod?: unknown }).mod).toHaveProperty('handler');
    // The top-up watcher: the chain's RPC URL, the mint and PayPal; the deposit wallet is optional.
    const watcher = '../../functions/topup-watcher/handler';
    const [watcherNoChain, watcherLoaded] = loadSeries(watcher, [{ ...INIT_ENV, SOLANA_RPC_URL: undefined }, INIT_ENV]);
    expect(watcherNoChain).toMatchObject({ message: expect.stringMatching(/set SOLANA_RPC_URL or SOLANA_RPC_URL_SECRET_ARN/) });
    expect((watcherLoaded as { mod?: unknown }).mod).toHaveProperty('handler');
  });

  it('every route needs exactly what its registry entry says (configNeeds), and loads with that alone', () => {
    for (const route of ROUTES) {
      const needs = configNeeds(route)(KEY_AUTH);
      const given = Object.fromEntries(needs.flatMap((need) => awsForm(need).map((name) => [name, placeholder(name)])));
      // Without each need in turn (each fails the handler's init, naming it), then with all of them:
      // one registry, so the graph under the handler loads once (see loadSeries).
      const withouts = needs.map((need) => ({
        ...CLEARED,
        ...given,
        ...Object.fromEntries(namesOf(need).map((name) => [name, undefined])),
      }));
      const results = loadSeries(api(route.name), [...withouts, { ...CLEARED, ...given }]);
      needs.forEach((need, i) => {
        const named = awsForm(need)[0] ?? '';
        const error = results[i] as { name?: string; message?: string };
        expect([route.name, error.name, error.message]).toEqual([route.name, 'ConfigurationError', expect.stringContaining(named)]);
      });
      const loaded = results[needs.length] as { mod?: unknown };
      expect([route.name, Object.keys((loaded.mod ?? {}) as object)]).toEqual([route.name, ['handler']]);
    }
    // The MCP function needs what its tools' routes need: the chain and queue of withdraw, the hot wallet of a purchase.
    expect(configNeeds(routeNamed('mcp'))(KEY_AUTH).flatMap(awsForm)).toEqual(
      expect.arrayContaining(['PAYOUT_QUEUE_URL', 'SOLANA_HOT_WALLET_SECRET_ARN', 'APPROVAL_SECRET_ARN', 'PUBLIC_BASE_URL']),
    );
  });

  it('every route handler loads its own entry’s needs from the generated module, and names no other route’s', () => {
    for (const route of ROUTES) {
      const source = readFileSync(path.resolve(__dirname, '..', '..', handlerEntry(route)), 'utf8');
      // A route that is an operation: its handler is derived (lambdaHandler loads the operation's needs), which are its entry's.
      const derived = /^export const handler = lambdaHandler\((\w+)\);$/m.exec(source)?.[1];
      if (derived !== undefined) {
        const op = OPERATIONS.get(derived);
        expect([route.name, op?.route]).toEqual([route.name, route.name]);
        expect([route.name, op?.needs === (NEEDS as Record<string, unknown>)[needsExport(route.name)]]).toEqual([route.name, true]);
        continue;
      }
      const own = `NEEDS.${needsExport(route.name)}`;
      expect([route.name, source.match(/^import \* as NEEDS from '.*';$/gm)]).toEqual([
        route.name,
        ["import * as NEEDS from '../registry/needs.generated';"],
      ]);
      // One loadConfig, with its own export: not another route's, nor a list written by hand beside it.
      expect([route.name, source.match(/\bloadConfig\(.*\);/g)]).toEqual([route.name, [`loadConfig({ require: ${own} });`]]);
      expect([route.name, source.match(/\bNEEDS(\.\w+|\[)/g)]).toEqual([route.name, [own]]);
    }
  });

  it('under ADMIN_AUTH=iam the routes that recognise the operator load without any admin key (API Gateway authorizes them)', () => {
    const routes = ROUTES.filter(recognisesAdmin);
    expect(routes.map((r) => r.name)).toContain('get-charge');
    for (const route of routes) {
      // Its other needs given (a route that shows a receipt link needs PUBLIC_BASE_URL too, DESIGN §27): the admin key alone is left out.
      const others = configNeeds(route)({ ADMIN_AUTH: 'iam' } as Config);
      const given = Object.fromEntries(others.flatMap((need) => awsForm(need).map((name) => [name, placeholder(name)])));
      const [withoutKey, iam] = loadSeries(api(route.name), [given, { ...given, ADMIN_AUTH: 'iam' }]) as [
        { message?: string },
        { mod?: unknown },
      ];
      expect([route.name, withoutKey.message]).toEqual([route.name, expect.stringContaining('set ADMIN_KEY or ADMIN_KEY_SECRET_ARN')]);
      expect([route.name, Object.keys((iam.mod ?? {}) as object)]).toEqual([route.name, ['handler']]);
    }
  });
});

describe('a configuration that breaks after init', () => {
  it('still answers a generic 500 and logs it: the error path does not depend on parsing', async () => {
    const loaded = load(api('register-agent'), { LOG_LEVEL: 'ERROR' });
    const { handler } = loaded.mod as { handler: (event: APIGatewayProxyEventV2) => Promise<{ statusCode?: number; body?: string }> };
    delete process.env.TABLE_NAME;
    loaded.resetForTests();
    // Powertools writes ERROR lines to stderr.
    const lines: string[] = [];
    const out = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      const res = await handler({
        rawPath: '/api/v1/agents/register',
        headers: { 'content-type': 'application/json' },
        body: '{}',
        requestContext: { http: { method: 'POST' }, requestId: 'req-broken-config' },
      } as unknown as APIGatewayProxyEventV2);
      expect(res).toMatchObject({ statusCode: 500, body: JSON.stringify({ error: 'internal error' }) });
    } finally {
      out.mockRestore();
    }
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.message === 'unhandled error');
    expect(logged).toMatchObject({ level: 'ERROR', correlation_id: 'req-broken-config', error: { name: 'ConfigurationError' } });
    expect(logged.error.message).toMatch(/TABLE_NAME is not set/);
  });
});
