/**
 * For a test file that imports link-making handlers (`publicLinks`, functions/registry) directly:
 * their init requires PUBLIC_BASE_URL (functions/http/request.ts), which the tests' own
 * environment (./env.ts) leaves unset so that a function given none is caught. Imported first,
 * before the handlers, it gives the file an address of its own; nothing is ever fetched from it.
 */
process.env.PUBLIC_BASE_URL ??= 'https://pay.test.example.com';
