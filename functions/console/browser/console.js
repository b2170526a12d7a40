/**
 * The console's script on every page (DESIGN §26), small and without dependencies; every page
 * works without it. The browser's time zone, as the `console-tz` cookie the pages read (the
 * router's `validTimeZone`): set on every page, so the next page shows times in it and drops the
 * note saying they are in UTC; without script the note stays. `Copy` beside a secret shown once: the button is `hidden` in the markup (without
 * script the secret stays selectable text), shown and wired here; the clipboard, or, where the
 * browser refuses it, the secret selected for the payer to copy. Bundled by bin/console-assets.ts
 * into functions/console/assets.generated.ts.
 */

const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
if (zone) {
  // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is not in every browser the console serves.
  document.cookie = `console-tz=${encodeURIComponent(zone)}; Path=/; SameSite=Lax${location.protocol === 'https:' ? '; Secure' : ''}`;
}

function textOf(target) {
  return ('value' in target ? target.value : target.textContent).trim();
}

function select(target) {
  if (typeof target.select === 'function') {
    target.focus();
    target.select();
    return;
  }
  const range = document.createRange();
  range.selectNodeContents(target);
  const selection = window.getSelection();
  selection?.removeAllRanges();
  selection?.addRange(range);
}

for (const button of document.querySelectorAll('button[data-copy]')) {
  const target = document.getElementById(button.dataset.copy);
  const status = document.getElementById(`${button.dataset.copy}-copied`);
  if (!target) continue;
  button.hidden = false;
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(textOf(target));
      if (status) status.textContent = 'Copied.';
    } catch {
      select(target);
      if (status) status.textContent = 'Selected: press Ctrl+C (⌘C on a Mac) to copy.';
    }
  });
}
