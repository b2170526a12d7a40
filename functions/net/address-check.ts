/**
 * The registration-time address check of an endpoint URL: its shape (core/webhooks.ts) and what
 * its host resolves to now. Delivery checks again at every attempt (webhooks/sender.ts), so a host
 * that later resolves elsewhere (DNS rebinding) is still refused. An adapter, not core: it asks
 * the resolver (core does no I/O, test/architecture/layers.test.ts).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { type AddressPolicy, bareHost, isAllowedAddress, webhookUrlProblem } from '../core/webhooks';
import { refuse } from '../messages/refusal';

export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Throws a 400 naming what is wrong with the URL. */
export async function checkEndpointUrl(raw: string, policy: AddressPolicy, resolve: Resolver = systemResolver): Promise<URL> {
  const problem = webhookUrlProblem(raw, policy);
  if (problem) throw problem;
  const url = new URL(raw);
  const host = bareHost(url);
  if (isIP(host) !== 0) return url;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    throw refuse('urlHostUnresolved');
  }
  if (addresses.length === 0) throw refuse('urlHostUnresolved');
  if (!addresses.every((a) => isAllowedAddress(a, policy))) throw refuse('urlNotPublic');
  return url;
}
