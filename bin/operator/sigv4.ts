/**
 * AWS Signature Version 4 for the admin API, where API Gateway authorizes the admin routes with
 * IAM (docs/operating/runbooks.md "Admin access"): the AWS SDK's own signer (@smithy/signature-v4, SHA-256 from
 * @smithy/core) over credentials of the standard provider chain, service `execute-api`.
 */
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

/** The service name API Gateway checks signatures of invocations against. */
export const EXECUTE_API = 'execute-api';

/** One request to sign: what goes over the wire. */
export interface UnsignedRequest {
  method: string;
  url: URL;
  /** Headers to send and sign (lower-case names). `host` is added from the URL. */
  headers: Record<string, string>;
  body?: string;
}

export type RequestSigner = (request: UnsignedRequest, signingDate?: Date) => Promise<Record<string, string>>;

/**
 * A signer for `region` and `service`: given a request, the headers to send it with (the ones
 * given, plus `host`, `x-amz-date`, `authorization` and, for temporary credentials,
 * `x-amz-security-token`). The body's hash goes into the signature, so the body sent must be the
 * exact text signed. No `x-amz-content-sha256` header: only S3 wants it.
 */
export function requestSigner(options: {
  region: string;
  credentials: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  service?: string;
}): RequestSigner {
  const signer = new SignatureV4({
    service: options.service ?? EXECUTE_API,
    region: options.region,
    credentials: options.credentials,
    sha256: Sha256,
    applyChecksum: false,
  });
  return async ({ method, url, headers, body }, signingDate) => {
    const query: Record<string, string | string[]> = {};
    for (const [name, value] of url.searchParams) {
      const seen = query[name];
      query[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
    }
    const signed = await signer.sign(
      {
        method,
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port ? { port: Number(url.port) } : {}),
        path: url.pathname,
        query,
        // Signed as the Host header the client will send: the URL's host, with a port only when not the default.
        headers: { ...headers, host: url.host },
        ...(body === undefined ? {} : { body }),
      },
      signingDate ? { signingDate } : {},
    );
    return signed.headers;
  };
}

/** The region in an API Gateway hostname (`<id>.execute-api.<region>.amazonaws.com[.cn]`), if it is one. */
export function regionOfApiUrl(url: URL): string | undefined {
  return /^[a-z0-9]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/.exec(url.hostname)?.[1];
}
