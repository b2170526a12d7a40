/** functions/http/request.ts `publicBaseUrl`: links come from configuration, never from a request. */
import { resetForTests } from '../../functions/config';
import { publicBaseUrl } from '../../functions/http/request';

const saved = process.env.PUBLIC_BASE_URL;
afterEach(() => {
  if (saved === undefined) delete process.env.PUBLIC_BASE_URL;
  else process.env.PUBLIC_BASE_URL = saved;
  resetForTests();
});

describe('the base of the links the API hands out', () => {
  it('is PUBLIC_BASE_URL (without a trailing slash); it takes no request, so no Host header can change it', () => {
    process.env.PUBLIC_BASE_URL = 'https://pay.example.com/v1/';
    resetForTests();
    expect(publicBaseUrl.length).toBe(0);
    expect(publicBaseUrl()).toBe('https://pay.example.com/v1');
  });

  it('is a configuration error when PUBLIC_BASE_URL is not set, never a guess', () => {
    delete process.env.PUBLIC_BASE_URL;
    resetForTests();
    expect(() => publicBaseUrl()).toThrow('PUBLIC_BASE_URL is not set');
  });

  it('refuses a PUBLIC_BASE_URL that is not an http(s) URL', () => {
    process.env.PUBLIC_BASE_URL = 'javascript:alert(1)';
    resetForTests();
    expect(() => publicBaseUrl()).toThrow(/PUBLIC_BASE_URL/);
  });
});
