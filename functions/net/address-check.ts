/**
 * The registration-time address check of an endpoint URL: its shape (core/webhooks.ts) and what
 * its host resolves to now. Delivery checks again at every attempt (webhooks/sender.ts), so a host
 * that later resolves elsewhere (DNS rebinding) is still refused. An adapter, not core: it asks
 * the resolver (core does no I/O, test/architecture/layers.test.ts).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ValidationError } from '../core/errors';
import { type AddressPolicy, bareHost, isAllowedAddress, webhookUrlProblem } from '../core/webhooks';

export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Throws a 400 naming what is wrong with the URL. */
export async function checkEndpointUrl(raw: string, policy: AddressPolicy, resolve: Resolver = systemResolver): Promise<URL> {
  const problem = webhookUrlProblem(raw, policy);
  if (problem) throw new ValidationError(problem);
  const url = new URL(raw);
  const host = bareHost(url);
  if (isIP(host) !== 0) return url;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    throw new ValidationError('url host does not resolve');
  }
  if (addresses.length === 0) throw new ValidationError('url host does not resolve');
  if (!addresses.every((a) => isAllowedAddress(a, policy))) throw new ValidationError('url must resolve to a public address');
  return url;
}
