/**
 * The console's script on every page (DESIGN §26), small and without dependencies; every page
 * works without it. `Copy` beside a secret shown once: the button is `hidden` in the markup (without
 * script the secret stays selectable text), shown and wired here; the clipboard, or, where the
 * browser refuses it, the secret selected for the payer to copy. Bundled by bin/console-assets.ts
 * into functions/console/assets.generated.ts.
 */

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
