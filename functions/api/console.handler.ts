/** ANY /console — the console's Overview (and its sign-out posts): functions/console/handler.ts. */
export { handler } from '../console/handler';
