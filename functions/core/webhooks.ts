/**
 * Webhook endpoints: the domain rules that need no I/O. Which addresses a delivery may reach
 * (the SSRF rule), which URLs may be registered, the retry schedule, the secret's shape.
 * See docs/webhooks.md ("Safety", "Retries").
 */
import { randomBytes } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import { type Refusal, refuse } from '../messages/refusal';
import { ipFamily } from './ip';

/** At most this many endpoints per owner (agent or user). */
export const MAX_WEBHOOKS_PER_OWNER = 10;
/**
 * Test pings per endpoint: at most TEST_EVENTS_PER_WINDOW in a window of TEST_EVENT_WINDOW_SECONDS
 * that opens at the first ping (store/events/webhook-test-window.repository.ts). A ping is a real signed
 * POST from the shared delivery worker; five a minute is plenty to debug a receiver.
 */
export const TEST_EVENTS_PER_WINDOW = 5;
export const TEST_EVENT_WINDOW_SECONDS = 60;
/** Longest accepted endpoint URL. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;
/**
 * A receiver has this long to answer with a 2xx (WEBHOOK_TIMEOUT_MS overrides it). Short, because
 * a send that hangs holds a place on the delivery worker every tenant shares (DESIGN §15 said
 * 10 s; issue 19 halved it).
 */
export const DELIVERY_TIMEOUT_MS = 5_000;
/** At most this much of a receiver's answer is read (then kept, truncated, on the attempt). */
export const MAX_RESPONSE_BYTES = 4096;
/** The error text kept on an attempt, at most. */
export const MAX_ERROR_CHARS = 200;

/**
 * Seconds to wait after failed attempt n (index n-1) before the next one: exponential, the
 * Standard Webhooks reference schedule. 8 attempts over 27 h 35 min; after the last failure the
 * delivery is dead (visible in the deliveries list).
 */
export const DEFAULT_RETRY_SCHEDULE_SECONDS: readonly number[] = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];

const ulid = monotonicFactory();
export const WEBHOOK_ID_PATTERN = /^wh_[0-9a-z]{26}$/;
export const newWebhookId = (): string => `wh_${ulid().toLowerCase()}`;
export const isWebhookId = (value: string | undefined): value is string => value !== undefined && WEBHOOK_ID_PATTERN.test(value);

/** A new signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks' format). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

export interface AddressPolicy {
  /** Local runs: loopback addresses (and plain http to them) are allowed. */
  allowLoopback: boolean;
}

// IPv4 ranges that are not the public internet (RFC 6890 special-purpose registry).
const V4_BLOCKED: readonly [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function inV4Range(ip: number, base: string, bits: number): boolean {
  const size = 2 ** (32 - bits);
  const start = v4ToInt(base);
  return ip >= start && ip < start + size;
}

/** The 8 16-bit groups of an IPv6 address (with an embedded dotted IPv4 tail expanded). */
function v6Groups(ip: string): number[] | undefined {
  let address = ip.toLowerCase();
  const zone = address.indexOf('%');
  if (zone >= 0) address = address.slice(0, zone);
  const dotted = address.match(/^(.*:)(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted?.[1] && dotted[2]) {
    const n = v4ToInt(dotted[2]);
    address = `${dotted[1]}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail, ...more] = address.split('::');
  if (more.length > 0 || head === undefined) return undefined;
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined ? [] : tail === '' ? [] : tail.split(':');
  const missing = 8 - h.length - t.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  const groups = [...h, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...t].map((g) => Number.parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/** Whether a literal IP address is loopback (127/8, ::1, ::ffff:127.x). */
export function isLoopbackAddress(ip: string): boolean {
  if (ipFamily(ip) === 4) return inV4Range(v4ToInt(ip), '127.0.0.0', 8);
  const g = v6Groups(ip);
  if (!g) return false;
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return true;
  const mapped = mappedV4(g);
  return mapped !== undefined && inV4Range(mapped, '127.0.0.0', 8);
}

function mappedV4(g: number[]): number | undefined {
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (the deprecated IPv4-compatible form).
  const zeros = g.slice(0, 5).every((x) => x === 0);
  if (zeros && (g[5] === 0xffff || g[5] === 0)) return (g[6] ?? 0) * 65536 + (g[7] ?? 0);
  return undefined;
}

/**
 * Whether a delivery may connect to this literal address: a public unicast address, or (locally)
 * loopback. Private, link-local (the cloud metadata service), CGNAT, multicast, documentation,
 * IPv6 unique-local and site-local, and IPv4 hidden in IPv6 (mapped, compatible, NAT64, 6to4,
 * Teredo) are all refused.
 */
export function isAllowedAddress(ip: string, policy: AddressPolicy): boolean {
  if (policy.allowLoopback && isLoopbackAddress(ip)) return true;
  const family = ipFamily(ip);
  if (family === 4) {
    const n = v4ToInt(ip);
    return !V4_BLOCKED.some(([base, bits]) => inV4Range(n, base, bits));
  }
  if (family !== 6) return false;
  const g = v6Groups(ip);
  if (!g) return false;
  const mapped = mappedV4(g);
  if (mapped !== undefined) return false;
  const first = g[0] ?? 0;
  // Only global unicast 2000::/3 …
  if ((first & 0xe000) !== 0x2000) return false;
  // … minus the special blocks inside it: 2001::/23 (Teredo, benchmarking, ORCHID…), 2001:db8::/32
  // (documentation), 2002::/16 (6to4 wraps an IPv4 address), 3fff::/20 (documentation).
  if (first === 0x2001 && (g[1] ?? 0) < 0x200) return false;
  if (first === 0x2001 && g[1] === 0x0db8) return false;
  if (first === 0x2002) return false;
  if (first === 0x3fff && (g[1] ?? 0) < 0x1000) return false;
  return true;
}

/** A URL host without IPv6 brackets. */
export const bareHost = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1']);

/**
 * The shape rule for an endpoint URL (no DNS): https, no credentials, no fragment; plain http
 * only to a loopback host when the policy allows loopback (local runs). Returns the problem as
 * the public message, or undefined.
 */
export function webhookUrlProblem(raw: string, policy: AddressPolicy): Refusal | undefined {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return refuse('webhookUrlTooLong', MAX_WEBHOOK_URL_LENGTH);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('webhookUrlInvalid');
  }
  const host = bareHost(url);
  const loopbackHost = LOOPBACK_NAMES.has(host) || (ipFamily(host) !== 0 && isLoopbackAddress(host));
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowLoopback && loopbackHost)) {
    return refuse(policy.allowLoopback ? 'webhookUrlNotHttpsOrLoopback' : 'webhookUrlNotHttps');
  }
  if (url.username || url.password) return refuse('webhookUrlCredentials');
  if (url.hash) return refuse('webhookUrlFragment');
  if (ipFamily(host) !== 0 && !isAllowedAddress(host, policy)) return refuse('urlNotPublic');
  if (!policy.allowLoopback && host === 'localhost') return refuse('urlNotPublic');
  return undefined;
}

/**
 * An endpoint that keeps failing is backed off (a circuit breaker per endpoint, kept on its item):
 * after ENDPOINT_FAILURES_BEFORE_BACKOFF consecutive failed sends, nothing is sent to it until
 * `backoffUntil`; then ONE delivery is sent as a probe (claimed by a conditional write, so
 * concurrent workers cannot all probe). A probe that fails doubles the back-off (30 s, 1 min, …,
 * at most 1 h); any success closes the breaker. A test `ping` is always sent: it is how an owner
 * checks a fix, and it is rate-limited.
 */
export const ENDPOINT_FAILURES_BEFORE_BACKOFF = 5;
export const ENDPOINT_BACKOFF_BASE_SECONDS = 30;
export const ENDPOINT_BACKOFF_MAX_SECONDS = 3_600;
/** A probe holds the endpoint this much longer than the send timeout (a worker that dies mid-probe frees it then). */
export const PROBE_MARGIN_MS = 5_000;

/** The breaker's state on an endpoint item. */
export interface EndpointHealth {
  /** Consecutive failed sends (0 after any success). */
  failureStreak: number;
  /** While set and in the future, deliveries wait (epoch ms); past, the next one probes. */
  backoffUntil?: number;
  /** Probes that failed since the breaker opened (the back-off's exponent). */
  failedProbes: number;
}

export const HEALTHY: EndpointHealth = { failureStreak: 0, failedProbes: 0 };

/** The back-off after `failedProbes` failed probes. */
export const endpointBackoffSeconds = (failedProbes: number): number =>
  Math.min(ENDPOINT_BACKOFF_BASE_SECONDS * 2 ** failedProbes, ENDPOINT_BACKOFF_MAX_SECONDS);

/** What the worker does with a delivery, given its endpoint's health. */
export type BreakerDecision =
  | { kind: 'send' }
  /** The back-off is over: send this one as the probe, if it can claim it (`backoffUntil` still `seen`). */
  | { kind: 'probe'; seen: number }
  /** Backed off: do not send before `until` (epoch ms). */
  | { kind: 'hold'; until: number };

export function breakerDecision(health: EndpointHealth, nowMs: number, isPing: boolean): BreakerDecision {
  if (isPing || health.backoffUntil === undefined) return { kind: 'send' };
  if (health.backoffUntil > nowMs) return { kind: 'hold', until: health.backoffUntil };
  return { kind: 'probe', seen: health.backoffUntil };
}

/** Seconds to wait after failed attempt `attempt` (1-based), or undefined when it was the last. */
export function retryDelaySeconds(schedule: readonly number[], attempt: number): number | undefined {
  return schedule[attempt - 1];
}

/** Attempts a delivery gets in all: the first and one per scheduled retry. */
export const maxAttempts = (schedule: readonly number[]): number => schedule.length + 1;

/** A webhook endpoint (its secret is never part of it; the store keeps that sealed). */
export interface Webhook {
  id: string;
  /** `agent#<id>` or `user#<id>`. */
  owner: string;
  url: string;
  events: string[];
  createdAt: string;
}

export type DeliveryStatus = 'succeeded' | 'failed' | 'dead';

/** One attempt at delivering one event to one endpoint. */
export interface DeliveryAttempt {
  id: string;
  webhookId: string;
  eventId: string;
  type: string;
  attempt: number;
  /** succeeded (2xx), failed (another attempt is scheduled), dead (the last attempt failed). */
  status: DeliveryStatus;
  statusCode?: number;
  error?: string;
  createdAt: string;
  durationMs: number;
  nextAttemptAt?: string;
}
