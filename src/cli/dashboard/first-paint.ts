/**
 * The page's first paint, in the HTML itself: the first snapshot as a JSON data block the page
 * script starts from (no "Waiting for the bot…" while the stream connects), and a short summary
 * of it written here, so a screenshot taken before any script ran, or with scripts off, shows
 * the bot's state too. The script replaces the summary with the full page.
 */

function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
}

/** JSON safe inside a `<script type="application/json">` element (no `</script>`, no `<!--`). */
export function jsonDataBlock(document: unknown): string {
  return JSON.stringify(document)
    .replaceAll('<', '\\u003c')
    .replaceAll('>', '\\u003e')
    .replaceAll('&', '\\u0026')
    .replaceAll('\u2028', '\\u2028')
    .replaceAll('\u2029', '\\u2029');
}

type Loose = Readonly<Record<string, unknown>> | null;

function record(value: unknown): Loose {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
}

function textOf(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '-';
}

function card(label: string, id: string, value: string): string {
  return `<div class="card"><div class="label">${escapeHtml(label)}</div><div class="value" id="${id}">${escapeHtml(value)}</div></div>`;
}

/** The summary of a snapshot (trading state, account, counts); the waiting line without one. */
export function firstPaintHtml(snapshot: unknown): string {
  const document = record(snapshot);
  if (document === null) return '<p class="meta">Waiting for the bot…</p>';
  const trading = record(document.trading);
  const account = record(document.account);
  const venueKey = record(document.venueKey);
  const state = textOf(trading?.state ?? 'unknown');
  const reason = typeof trading?.reason === 'string' ? trading.reason : '';
  const positions = Array.isArray(document.positions) ? document.positions.length : 0;
  const orders = Array.isArray(document.openOrders) ? document.openOrders.length : 0;
  const keyLine =
    venueKey !== null && venueKey.state !== 'valid' && typeof venueKey.reason === 'string'
      ? `<p class="notice warn" id="venue-key">${escapeHtml(`venue key ${textOf(venueKey.state)}: ${venueKey.reason}`)}</p>`
      : '';
  return [
    '<div>',
    '<header><h1>paperbot</h1>',
    `<span class="badge ${escapeHtml(state)}" id="trading-state">${escapeHtml(state)}</span>`,
    `<span id="trading-reason" class="meta">${escapeHtml(reason)}</span></header>`,
    keyLine,
    '<div class="cards">',
    card('May trade', 'may-trade', trading?.mayTrade === true ? 'yes' : 'no'),
    card(
      `Equity ${textOf(account?.settlement_asset ?? '')}`,
      'equity',
      textOf(account?.total_equity),
    ),
    card('Positions', 'position-count', String(positions)),
    card('Open orders', 'order-count', String(orders)),
    '</div>',
    '</div>',
  ].join('\n');
}
