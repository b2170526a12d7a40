/** ANY /console/{proxy+} — every other console page, its assets and passkey ceremonies: functions/console/handler.ts. */
export { handler } from '../console/handler';
