import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import { htmlErrorResponse } from '../http/page';
import { homePage } from '../pages/home.view';
import * as NEEDS from '../registry/needs.generated';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.home });

/** GET / — a page for people: links to the console, the API's document and /health. */
export const handler = httpHandler(async () => homePage(), { errors: htmlErrorResponse });
