/** The route table is the operation registry's (functions/registry/routes.ts); this path keeps the API adapter's, lib's and the tests' imports. */
export * from '../registry/routes';
