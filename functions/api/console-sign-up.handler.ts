import { loadConfig } from '../config';
import * as NEEDS from '../registry/needs.generated';

/** POST /console/signup/{proxy+} — the passkey sign-up ceremony: functions/console/handler.ts, on a route of its own (its own throttle, the sign-in grant). */
export { handler } from '../console/handler';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.consoleSignUp });
