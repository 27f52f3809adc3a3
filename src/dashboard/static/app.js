// leasehold dashboard: the little the pages need from the browser.
// Live regions (#live, data-live) are polled by htmx every 2 s; no request
// goes out while the tab is hidden, and one goes at once when it shows again.
document.addEventListener('htmx:beforeRequest', (event) => {
  if (document.visibilityState === 'hidden' && event.detail.elt.hasAttribute('data-live')) event.preventDefault();
});

document.addEventListener('visibilitychange', () => {
  const region = document.getElementById('live');
  if (document.visibilityState === 'visible' && region !== null && region.hasAttribute('data-live'))
    window.htmx.trigger(region, 'refresh');
});

// A live update never lands between a press and its release: the two would meet different elements, and the
// click (following a link, say) would be lost. The update is skipped; the next one comes 2 s later.
let pressed = false;
document.addEventListener('pointerdown', () => (pressed = true), true);
document.addEventListener('pointerup', () => setTimeout(() => (pressed = false)), true);
document.addEventListener('pointercancel', () => (pressed = false), true);
document.addEventListener('htmx:beforeSwap', (event) => {
  if (pressed && event.detail.target.hasAttribute('data-live')) event.detail.shouldSwap = false;
});

// Say so when the server stops answering, and stop saying it when it answers again.
document.addEventListener('htmx:sendError', () => document.body.classList.add('offline'));
document.addEventListener('htmx:afterRequest', (event) => {
  if (event.detail.successful) document.body.classList.remove('offline');
});

// Forms with data-confirm ask first (cancelling a job, say).
document.addEventListener('submit', (event) => {
  const message = event.target.getAttribute('data-confirm');
  if (message !== null && !window.confirm(message)) event.preventDefault();
});

// A live update replaces the region: what the reader opened (the exited workers, say) stays open.
let openDetails = [];
document.addEventListener('htmx:beforeSwap', (event) => {
  openDetails = [...event.detail.target.querySelectorAll('details[id][open]')].map((details) => details.id);
});
document.addEventListener('htmx:afterSwap', () => {
  for (const id of openDetails) document.getElementById(id)?.setAttribute('open', '');
});
