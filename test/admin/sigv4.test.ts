/**
 * The CLI's SigV4 signer (bin/operator/sigv4.ts) against AWS's published test vector, and against
 * an independent verifier (test/support/sigv4-verify.ts) that recomputes signatures from scratch.
 */
import { regionOfApiUrl, requestSigner } from '../../bin/operator/sigv4';
import { verifySigV4 } from '../support/sigv4-verify';

/** AWS's SigV4 test suite, `get-vanilla`: its credentials, date, scope and expected Authorization. */
const VECTOR = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  date: new Date('2015-08-30T12:36:00Z'),
  authorization:
    'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
};

const TEST_CREDENTIALS = {
  accessKeyId: 'AKIATESTTESTTESTTEST',
  secretAccessKey: 'test/secret/key/for/signing/only/0123456789',
  sessionToken: 'session-token-for-tests',
};

describe('the admin CLI signer', () => {
  it("reproduces AWS's get-vanilla test vector exactly", async () => {
    const sign = requestSigner({ region: 'us-east-1', service: 'service', credentials: VECTOR });
    const headers = await sign({ method: 'GET', url: new URL('https://example.amazonaws.com/'), headers: {} }, VECTOR.date);
    expect(headers).toEqual({ host: 'example.amazonaws.com', 'x-amz-date': '20150830T123600Z', authorization: VECTOR.authorization });
  });

  it('the independent verifier accepts the vector, and refuses it with another secret', () => {
    const arrived = {
      method: 'GET',
      path: '/',
      query: '',
      headers: { host: 'example.amazonaws.com', 'x-amz-date': '20150830T123600Z', authorization: VECTOR.authorization },
      body: '',
    };
    const scope = { region: 'us-east-1', service: 'service' };
    expect(verifySigV4(arrived, { AKIDEXAMPLE: VECTOR.secretAccessKey }, scope).ok).toBe(true);
    expect(verifySigV4(arrived, { AKIDEXAMPLE: 'another-secret' }, scope)).toMatchObject({ ok: false, reason: 'signature does not match' });
  });

  it('signs an execute-api POST (body, query, port, session token) so that the verifier accepts exactly it', async () => {
    const sign = requestSigner({ region: 'eu-west-1', credentials: TEST_CREDENTIALS });
    const url = new URL('http://127.0.0.1:8443/api/v1/admin/users/u01abc/credits?b=2&a=1&a=0');
    const body = '{"amount":25.50,"currency":"USD"}';
    const headers = await sign({ method: 'POST', url, headers: { 'content-type': 'application/json', 'idempotency-key': 'k-1' }, body });
    expect(headers).toMatchObject({ host: '127.0.0.1:8443', 'x-amz-security-token': TEST_CREDENTIALS.sessionToken });
    const arrived = { method: 'POST', path: url.pathname, query: url.search.slice(1), headers, body };
    const secrets = { [TEST_CREDENTIALS.accessKeyId]: TEST_CREDENTIALS.secretAccessKey };
    const verdict = verifySigV4(arrived, secrets, { region: 'eu-west-1', service: 'execute-api' });
    expect(verdict).toMatchObject({
      ok: true,
      credential: expect.stringMatching(/^AKIATESTTESTTESTTEST\/\d{8}\/eu-west-1\/execute-api\/aws4_request$/),
    });
    expect(verdict.signedHeaders).toEqual(['content-type', 'host', 'idempotency-key', 'x-amz-date', 'x-amz-security-token']);

    // Anything changed on the way is refused: the body, a signed header, the path, the region.
    const refuses = (changed: Partial<typeof arrived>, region = 'eu-west-1') =>
      verifySigV4({ ...arrived, ...changed }, secrets, { region, service: 'execute-api' }).ok;
    expect(refuses({ body: '{"amount":2550,"currency":"USD"}' })).toBe(false);
    expect(refuses({ headers: { ...headers, 'idempotency-key': 'k-2' } })).toBe(false);
    expect(refuses({ path: '/api/v1/admin/users/u01abd/credits' })).toBe(false);
    expect(refuses({}, 'us-east-1')).toBe(false);
  });

  it('reads the region from an API Gateway hostname, and none from another', () => {
    expect(regionOfApiUrl(new URL('https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/'))).toBe('eu-west-1');
    expect(regionOfApiUrl(new URL('https://a1b2c3d4e5.execute-api.cn-north-1.amazonaws.com.cn/'))).toBe('cn-north-1');
    expect(regionOfApiUrl(new URL('https://pay.example.com/'))).toBeUndefined();
    expect(regionOfApiUrl(new URL('http://127.0.0.1:3000/'))).toBeUndefined();
  });
});
