/**
 * An independent check of AWS Signature Version 4, written from AWS's description of the algorithm
 * with node:crypto only (no AWS library), as a server that knows the caller's secret would do it:
 * rebuild the canonical request from what arrived, derive the signing key, recompute the signature.
 * test/admin/sigv4.test.ts proves it on AWS's published test vector before trusting it elsewhere.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export interface ArrivedRequest {
  method: string;
  /** The path as it arrived (still percent-encoded), without the query. */
  path: string;
  /** The raw query string, without `?`. */
  query: string;
  /** Header names lower-case; a repeated header joined with ','. */
  headers: Record<string, string | undefined>;
  body: string;
}

export interface Verdict {
  ok: boolean;
  reason?: string;
  /** `<accessKeyId>/<date>/<region>/<service>/aws4_request` of the Authorization header. */
  credential?: string;
  signedHeaders?: string[];
}

const sha256 = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
/** RFC 3986 unreserved characters stay; everything else is %XX (upper-case). */
const uriEncode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export function verifySigV4(req: ArrivedRequest, secrets: Record<string, string>, expected: { region: string; service: string }): Verdict {
  const auth = req.headers.authorization ?? '';
  const match = /^AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!match) return { ok: false, reason: 'no SigV4 Authorization header' };
  const [, credential = '', signedHeaderList = '', signature = ''] = match;
  const [accessKeyId = '', date = '', region = '', service = '', terminator] = credential.split('/');
  const signedHeaders = signedHeaderList.split(';');
  const verdict = { credential, signedHeaders };
  const secret = secrets[accessKeyId];
  if (!secret) return { ...verdict, ok: false, reason: `unknown access key ${accessKeyId}` };
  if (region !== expected.region || service !== expected.service || terminator !== 'aws4_request') {
    return { ...verdict, ok: false, reason: `scope ${credential} is not ${expected.region}/${expected.service}` };
  }
  const amzDate = req.headers['x-amz-date'] ?? '';
  if (!amzDate.startsWith(date)) return { ...verdict, ok: false, reason: 'x-amz-date does not match the scope date' };
  if (!signedHeaders.includes('host') || !signedHeaders.includes('x-amz-date')) {
    return { ...verdict, ok: false, reason: 'host and x-amz-date must be signed' };
  }
  if (req.headers['x-amz-security-token'] !== undefined && !signedHeaders.includes('x-amz-security-token')) {
    return { ...verdict, ok: false, reason: 'the session token must be signed' };
  }

  // Services other than S3 encode each path segment twice: once on the wire, once here.
  const canonicalUri = req.path.split('/').map(uriEncode).join('/') || '/';
  const canonicalQuery = req.query
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const [name = '', value = ''] = pair.split('=');
      return [uriEncode(decodeURIComponent(name)), uriEncode(decodeURIComponent(value.replace(/\+/g, ' ')))] as const;
    })
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const canonicalHeaders = signedHeaders.map((name) => `${name}:${(req.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonicalRequest = [req.method, canonicalUri, canonicalQuery, canonicalHeaders, signedHeaderList, sha256(req.body)].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  const recomputed = createHmac('sha256', key).update(stringToSign, 'utf8').digest();
  const ok = timingSafeEqual(recomputed, Buffer.from(signature, 'hex'));
  return { ...verdict, ok, ...(ok ? {} : { reason: 'signature does not match' }) };
}
