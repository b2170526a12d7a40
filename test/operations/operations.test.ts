/**
 * Each operation is its route's one definition (DESIGN §25): what it enforces is what the
 * registry documents. The body and query schemas are the very objects the OpenAPI operation names
 * (so `docs/openapi.json` cannot describe one input while the handler accepts another), the
 * credentials are the documented security alternatives, and the Idempotency-Key rule is the
 * documented one.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { OPERATIONS } from '../../functions/operations/all';
import type { Credentials } from '../../functions/operations/operation';
import type { Credential } from '../../functions/registry/doc';
import { handlerEntry, ROUTES, routeNamed } from '../../functions/registry/routes';

/** The security alternatives an operation's credentials stand for, as the registry words them. */
const SECURITY: Record<Credentials['kind'], readonly (readonly Credential[])[]> = {
  public: [],
  agent: [['agentKey']],
  agentForPayer: [['agentKey', 'userKey']],
  payer: [['userKey']],
  operator: [['adminKey'], ['adminSigV4']],
  agentOrOperatorKey: [['agentKey'], ['adminKey']],
  anyAgentKey: [['agentKey']],
  agentOrBearer: [['agentKey'], ['agentBearer']],
  agentOrPayer: [['agentKey'], ['userKey']],
};

const IDEMPOTENCY = { required: true, optional: 'optional', none: undefined } as const;

describe('the operations', () => {
  it('are there, each of a route of the registry', () => {
    expect(OPERATIONS.size).toBeGreaterThan(0);
    for (const [name, op] of OPERATIONS) expect([name, ROUTES.some((r) => r.name === op.route)]).toEqual([name, true]);
  });

  it('each enforces the body and query schemas its OpenAPI operation documents (the same objects)', () => {
    for (const [name, op] of OPERATIONS) {
      const doc = routeNamed(op.route).operation?.();
      expect([name, op.body?.schema === doc?.body?.schema]).toEqual([name, true]);
      expect([name, op.query === doc?.query]).toEqual([name, true]);
    }
  });

  it('each accepts the credentials and Idempotency-Key rule its OpenAPI operation documents', () => {
    for (const [name, op] of OPERATIONS) {
      const doc = routeNamed(op.route).operation?.();
      expect([name, SECURITY[(op.credentials as Credentials).kind]]).toEqual([name, doc?.security]);
      expect([name, IDEMPOTENCY[op.idempotency as keyof typeof IDEMPOTENCY]]).toEqual([name, doc?.idempotent]);
    }
  });

  it('a derived handler names its own route’s operation, and a route has at most one operation', () => {
    const seen = new Map<string, string>();
    for (const [name, op] of OPERATIONS) {
      expect([name, seen.get(op.route)]).toEqual([name, undefined]);
      seen.set(op.route, name);
    }
    for (const route of ROUTES) {
      const source = readFileSync(path.resolve(__dirname, '..', '..', handlerEntry(route)), 'utf8');
      const derived = /lambdaHandler\((\w+)\)/.exec(source)?.[1];
      if (derived !== undefined) expect([route.name, OPERATIONS.get(derived)?.route]).toEqual([route.name, route.name]);
      else expect([route.name, seen.get(route.name)]).toEqual([route.name, undefined]);
    }
  });
});
