import { loadConfig } from '../config';
import * as NEEDS from '../registry/needs.generated';

/** ANY /console — the console's Overview (and its sign-out posts): functions/console/handler.ts. */
export { handler } from '../console/handler';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.console });
