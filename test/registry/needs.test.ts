/**
 * functions/registry/needs.generated.ts is what bin/registry/needs.ts writes from the registry's
 * `configNeeds`: stale, it fails here, in the unit tier (`npm run docs` rewrites it). Each export, as
 * loadConfig reads it, is exactly its route's needs under either admin authorization.
 */
import { readFileSync } from 'node:fs';
import { NEEDS_MODULE, needsExport, renderNeedsModule } from '../../bin/registry/needs';
import type { Config, RequiredConfig } from '../../functions/config';
import * as NEEDS from '../../functions/registry/needs.generated';
import { configNeeds, ROUTES } from '../../functions/registry/routes';

const needsOf = (required: RequiredConfig, cfg: Config) => (typeof required === 'function' ? required(cfg) : required);

describe('the generated configuration needs (functions/registry/needs.generated.ts)', () => {
  it('is what `npm run docs` generates from the registry', () => {
    expect(readFileSync(NEEDS_MODULE, 'utf8')).toBe(renderNeedsModule());
  });

  it.each(['key', 'iam'] as const)('holds each route its entry’s needs, and nothing else, under ADMIN_AUTH=%s', (adminAuth) => {
    const cfg = { ADMIN_AUTH: adminAuth } as Config;
    const exports = NEEDS as Record<string, RequiredConfig>;
    expect(Object.keys(exports).sort()).toEqual(ROUTES.map((route) => needsExport(route.name)).sort());
    for (const route of ROUTES) {
      expect([route.name, needsOf(exports[needsExport(route.name)] ?? [], cfg)]).toEqual([route.name, configNeeds(route)(cfg)]);
    }
  });

  it('names each route’s export apart (two routes never share one)', () => {
    const names = ROUTES.map((route) => needsExport(route.name));
    expect(new Set(names).size).toBe(names.length);
    expect(needsExport('agent-x402-purchase-create')).toBe('agentX402PurchaseCreate');
  });
});
