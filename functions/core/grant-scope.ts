/**
 * A grant's scope (DESIGN §27, docs/grants.md "Scope"): where its agent may pay, as well as how
 * much. `payees` are Solana addresses a purchase's `payTo` must be one of; `hosts` are names a
 * purchase's `resource.url` host must match. Pure: the rules live here, so creation (contracts/grants.ts
 * normalises with them) and the check (use-cases/charges/charges.ts) cannot read a host two ways.
 *
 * Hosts are compared in one canonical form, made by the WHATWG URL parser itself (lower case, IDN →
 * punycode, numeric IPv4 spellings folded) with one trailing dot stripped, the form a purchase's
 * `resource.url` host is brought to before it is compared. Anything a host entry cannot mean
 * unambiguously is refused at creation rather than guessed at: a port, userinfo, a path, a query,
 * spaces, an IP address, a `*` anywhere but a leading `*.` label, a wildcard over a single label.
 *
 * Payees are compared as the 32 bytes they decode to. An entry must be the canonical base58 of 32
 * bytes (what every Solana tool prints), so the list says exactly one key per entry; a `payTo`
 * is already base58 of 32 bytes (core/purchases.ts judges it). Base58 is case-sensitive: the same
 * letters in another case are another key, and a hex or base64 spelling of a listed key is never
 * base58 of 32 bytes (refused at creation, and as a `payTo` it is refused before any scope).
 */
import bs58 from 'bs58';

/** At most this many entries in each list (and at least one). */
export const MAX_SCOPE_ENTRIES = 20;

export interface GrantScope {
  /** Canonical base58 Solana addresses. */
  payees?: string[];
  /** Canonical hosts: `api.example.com`, or `*.example.com` (any sub-domain, not the apex). */
  hosts?: string[];
}

/** Why a host entry is refused at creation (the API words it, messages/problems.ts). */
export type HostProblem = 'format' | 'port' | 'userinfo' | 'path' | 'spaces' | 'ip' | 'wildcard';

/** Why a payee entry is refused at creation. */
export type PayeeProblem = 'address' | 'canonical';

const WILDCARD = '*.';
/** A canonical host: labels of letters, digits, `-` and `_`, dotted; at most 253 characters. */
const CANONICAL_HOST = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/** The host of a URL as the scope compares it: WHATWG's host (already lower case and punycode), one trailing dot stripped. */
export function comparableHost(url: URL): string {
  const host = url.hostname;
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/**
 * A host entry in its canonical form, or why it is refused. `API.Example.COM.` → `api.example.com`;
 * `*.Bücher.example` → `*.xn--bcher-kva.example`.
 */
export function normaliseHostEntry(entry: string): { host: string } | { problem: HostProblem } {
  if (/\s/.test(entry) || entry.length === 0) return { problem: entry.length === 0 ? 'format' : 'spaces' };
  const wildcard = entry.startsWith(WILDCARD);
  const name = wildcard ? entry.slice(WILDCARD.length) : entry;
  if (name.includes('*')) return { problem: 'wildcard' };
  // Refused by character before parsing: the parser would read them as parts of a URL, not of a name.
  if (name.includes('@')) return { problem: 'userinfo' };
  if (/[/?#\\]/.test(name)) return { problem: 'path' };
  if (name.includes('[') || name.includes(']')) return { problem: 'ip' };
  if (name.includes(':')) return { problem: 'port' };
  let url: URL;
  try {
    url = new URL(`https://${name}/`);
  } catch {
    return { problem: 'format' };
  }
  const host = comparableHost(url);
  // An IPv4 address in any spelling the parser folds (`0x7f.1`, `2130706433`).
  if (IPV4.test(host)) return { problem: 'ip' };
  if (!CANONICAL_HOST.test(host)) return { problem: 'format' };
  // `*.com` would let the agent pay any .com host: a wildcard needs a name of at least two labels under it.
  if (wildcard && !host.includes('.')) return { problem: 'wildcard' };
  return { host: wildcard ? `${WILDCARD}${host}` : host };
}

/** A payee entry as stored (it must already be canonical base58 of 32 bytes), or why it is refused. */
export function checkPayeeEntry(entry: string): { payee: string } | { problem: PayeeProblem } {
  const bytes = decodeAddress(entry);
  if (!bytes) return { problem: 'address' };
  return bs58.encode(bytes) === entry ? { payee: entry } : { problem: 'canonical' };
}

function decodeAddress(text: string): Uint8Array | undefined {
  try {
    const bytes = bs58.decode(text);
    return bytes.length === 32 ? bytes : undefined;
  } catch {
    return undefined;
  }
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, i) => byte === b[i]);

/** Whether `payTo` is one of `payees`, compared as the 32 bytes each decodes to. */
export function payeeAllowed(payees: readonly string[], payTo: string): boolean {
  const wanted = decodeAddress(payTo);
  if (!wanted) return false;
  return payees.some((payee) => {
    const listed = decodeAddress(payee);
    return listed !== undefined && sameBytes(listed, wanted);
  });
}

/** Whether the host of `url` matches one of `hosts`: exactly, or as a sub-domain (any depth) of a `*.` entry. */
export function hostAllowed(hosts: readonly string[], url: string): boolean {
  let host: string;
  try {
    host = comparableHost(new URL(url));
  } catch {
    return false;
  }
  if (host.length === 0) return false;
  return hosts.some((entry) => (entry.startsWith(WILDCARD) ? host.endsWith(`.${entry.slice(WILDCARD.length)}`) : host === entry));
}

/**
 * Which scope refuses a payment under a grant with `scope`: a purchase to `payTo` for `resourceUrl`
 * (null: none given), or a plain charge (`purchase` undefined), which pays the grant's own agent and
 * is named by neither an address nor a host, so a scoped grant refuses it (docs/grants.md). Payees
 * are judged first. Undefined: allowed.
 */
export function scopeRefusal(
  scope: GrantScope | undefined,
  purchase: { payTo: string; resourceUrl: string | null } | undefined,
): 'payeeNotAllowedByGrant' | 'hostNotAllowedByGrant' | undefined {
  if (!scope) return undefined;
  if (scope.payees && !(purchase && payeeAllowed(scope.payees, purchase.payTo))) return 'payeeNotAllowedByGrant';
  if (scope.hosts && !(purchase?.resourceUrl && hostAllowed(scope.hosts, purchase.resourceUrl))) return 'hostNotAllowedByGrant';
  return undefined;
}
