import { refuse } from '../../functions/messages/refusal';
/** The cheap checks on PayPal's transmission headers (functions/rails/paypal.webhook-headers.ts): pure, no I/O. */
import { checkTransmissionHeaders, isPaypalCertUrl } from '../../functions/rails/paypal.webhook-headers';

const now = new Date('2026-01-15T09:30:00Z');
const headers = {
  'paypal-transmission-id': 'b2ee2ea0-a0a0-11ee-8c90-0242ac120002',
  'paypal-transmission-time': '2026-01-15T09:28:00Z',
  'paypal-transmission-sig': 'c2lnbmF0dXJl',
  'paypal-cert-url': 'https://api-m.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77',
  'paypal-auth-algo': 'SHA256withRSA',
};

describe("PayPal webhook's cheap checks", () => {
  it('accepts a fresh transmission with a certificate URL on one of PayPal’s four API hosts', () => {
    expect(checkTransmissionHeaders(headers, now)).toEqual({
      transmission: {
        transmissionId: headers['paypal-transmission-id'],
        transmissionTime: headers['paypal-transmission-time'],
        transmissionSig: headers['paypal-transmission-sig'],
        certUrl: headers['paypal-cert-url'],
        authAlgo: headers['paypal-auth-algo'],
      },
    });
    for (const host of ['api.paypal.com', 'api-m.paypal.com', 'api.sandbox.paypal.com', 'api-m.sandbox.paypal.com']) {
      expect([host, isPaypalCertUrl(`https://${host}/v1/notifications/certs/CERT-1`)]).toEqual([host, true]);
    }
  });

  it('refuses look-alike hosts, other schemes, ports, credentials and paths', () => {
    for (const url of [
      'https://paypal.com/v1/notifications/certs/CERT-1',
      'https://www.paypal.com/v1/notifications/certs/CERT-1',
      'https://api.paypal.com.example.com/v1/notifications/certs/CERT-1',
      'https://api-paypal.com/v1/notifications/certs/CERT-1',
      'http://api.paypal.com/v1/notifications/certs/CERT-1',
      'https://api.paypal.com:444/v1/notifications/certs/CERT-1',
      'https://a:b@api.paypal.com/v1/notifications/certs/CERT-1',
      'https://api.paypal.com/v1/notifications/certs/',
      'https://api.paypal.com/cert.pem',
      'api.paypal.com/v1/notifications/certs/CERT-1',
    ]) {
      expect([url, isPaypalCertUrl(url)]).toEqual([url, false]);
    }
  });

  it('names the first missing header, and refuses a stale or future time and an odd id', () => {
    expect(checkTransmissionHeaders({ ...headers, 'paypal-auth-algo': ' ' }, now)).toEqual({
      problem: refuse('paypalHeaderMissing', 'paypal-auth-algo'),
    });
    expect(checkTransmissionHeaders({}, now)).toEqual({ problem: refuse('paypalHeaderMissing', 'paypal-transmission-id') });
    const at = (time: string) => checkTransmissionHeaders({ ...headers, 'paypal-transmission-time': time }, now);
    expect(at('2026-01-15T09:25:00Z')).toHaveProperty('transmission');
    expect(at('2026-01-15T09:24:59Z')).toEqual({ problem: refuse('paypalTransmissionStale') });
    expect(at('2026-01-15T09:35:01Z')).toEqual({ problem: refuse('paypalTransmissionStale') });
    expect(at('soon')).toEqual({ problem: refuse('paypalTransmissionStale') });
    expect(checkTransmissionHeaders({ ...headers, 'paypal-transmission-id': 'a/b' }, now)).toEqual({
      problem: refuse('paypalTransmissionIdInvalid'),
    });
  });
});
