/**
 * `Copy` beside a secret the console shows once (DESIGN §26): the grant key, a new account key, a
 * webhook's signing secret, the welcome page's key. Progressive: the button is `hidden` in the
 * markup, so without script there is no dead button and the secret stays selectable text; the
 * console's script (browser/console.js) shows it and copies, and says so in the status beside it.
 */
import { html, type SafeHtml } from '../http/html';

/** The button for the element `targetId` (a readonly textarea, or any element whose text is the secret), and its status. */
export function copyButton(targetId: string, what: string): SafeHtml {
  return html`<p class="copy-row"><button type="button" class="copy" data-copy="${targetId}" hidden>Copy<span class="visually-hidden"> ${what}</span></button> <span class="copy-status" id="${targetId}-copied" role="status"></span></p>`;
}
