// Progressive enhancement of a flow's page: while the tab is in view, ask every few seconds
// whether the page changed (a conditional GET: 304 while the flow stands still) and reload
// when it did. Without JavaScript the page is the same, fresh on every reload.
const tag = document.querySelector('meta[name="fp-page-tag"]')?.content;
const EVERY_MS = 5000;
let busy = false;

async function check() {
  if (!tag || busy || document.visibilityState !== 'visible') return;
  busy = true;
  try {
    const response = await fetch(location.pathname + location.search, {
      headers: { 'If-None-Match': `"${tag}"` },
      cache: 'no-store',
      credentials: 'same-origin',
    });
    if (response.status === 200) location.reload();
  } catch {
    // Offline for a moment: the next check tries again.
  } finally {
    busy = false;
  }
}

if (tag) setInterval(check, EVERY_MS);
