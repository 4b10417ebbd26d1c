/* global document, window, fetch, EventSource */
// The dashboard page (runs in the browser). Preact with `h` calls, no JSX, so it needs no
// compiler settings; bundled by esbuild (src/cli/dashboard/assets.ts). It draws the snapshot
// the bot sends over Server-Sent Events and posts the controls with the page's token.
import { h, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

const tokenElement = document.querySelector('meta[name="paperbot-token"]');
const TOKEN = tokenElement === null ? null : tokenElement.getAttribute('content');

// The first snapshot comes in the HTML, so the page is drawn before the stream connects.
function firstSnapshot() {
  const element = document.getElementById('paperbot-snapshot');
  if (element === null) return null;
  try {
    return JSON.parse(element.textContent);
  } catch {
    return null;
  }
}

// How often the page reads the snapshot when it has no live-update stream.
const POLL_MS = 2000;

function duration(ms) {
  if (ms === null || ms === undefined || !(ms >= 0)) return '-';
  const seconds = Math.round(ms / 1000);
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (hours > 0) return `${hours}h ${minutes}m`;
  if (minutes > 0) return `${minutes}m ${seconds % 60}s`;
  return `${seconds}s`;
}

function time(ms) {
  if (ms === null || ms === undefined) return '-';
  return new Date(ms).toISOString().slice(11, 19);
}

function text(value) {
  return value === null || value === undefined ? '-' : String(value);
}

function signed(value) {
  if (value === null || value === undefined) return '-';
  return value.startsWith('-') || /^0(\.0*)?$/.test(value) ? value : `+${value}`;
}

function Card({ label, value, id }) {
  return h('div', { class: 'card' }, [
    h('div', { class: 'label' }, label),
    h('div', { class: 'value', id }, value),
  ]);
}

function Table({ id, headers, rows, empty }) {
  if (rows.length === 0) return h('p', { class: 'none', id }, empty);
  return h('div', { class: 'scroll' }, [
    h('table', { id }, [
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          headers.map((header) => h('th', null, header)),
        ),
      ),
      h(
        'tbody',
        null,
        rows.map((row) =>
          h(
            'tr',
            { class: row.className || '' },
            row.cells.map((cell, index) =>
              h('td', { class: row.text && row.text.includes(index) ? 'text' : '' }, cell),
            ),
          ),
        ),
      ),
    ]),
  ]);
}

function EquityChart({ points }) {
  const element = useRef(null);
  const drawn = useRef({ count: -1, at: 0, chart: null });
  useEffect(() => {
    const state = drawn.current;
    const now = Date.now();
    // Redrawn when the curve changed, at most every five seconds.
    if (element.current === null || state.count === points.length) return;
    if (state.chart !== null && now - state.at < 5000) return;
    if (!window.PaperbotCharts) return;
    if (state.chart !== null) state.chart.remove();
    element.current.textContent = '';
    state.chart = window.PaperbotCharts.draw('equity', element.current, {
      series: [{ kind: 'line', color: '#1565c0', title: 'equity', points }],
    });
    state.count = points.length;
    state.at = now;
  });
  return h('div', { class: 'chart small', id: 'equity-chart', ref: element });
}

async function post(action) {
  const response = await fetch(`/dashboard/control/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-paperbot-token': TOKEN },
    body: JSON.stringify({ confirm: action }),
  });
  const body = await response.json().catch(() => ({}));
  return body.message || body.error || `HTTP ${response.status}`;
}

const CONTROL_LABELS = {
  halt: ['Halt', 'Halt trading? Nothing new is placed until cleared; cancels still go out.'],
  reduce: ['Reduce only', 'Move to reduce-only? Only orders that shrink positions are placed.'],
  clear: ['Clear', 'Clear the halt or reduction and remove the kill file?'],
  'cancel-all': ['Cancel all orders', 'Cancel every open order of this account now?'],
};

function Controls() {
  const [result, setResult] = useState('');
  if (TOKEN === null) return null;
  const press = (action) => {
    if (!window.confirm(CONTROL_LABELS[action][1])) return;
    setResult(`${action}…`);
    post(action).then(setResult, (error) => setResult(String(error)));
  };
  return h('div', { class: 'controls', id: 'controls' }, [
    ...Object.keys(CONTROL_LABELS).map((action) =>
      h(
        'button',
        {
          id: `control-${action}`,
          class: action === 'halt' || action === 'cancel-all' ? 'danger' : '',
          onClick: () => press(action),
        },
        CONTROL_LABELS[action][0],
      ),
    ),
    h('span', { class: 'result', id: 'control-result' }, result),
  ]);
}

function Dashboard({ snapshot, live }) {
  if (snapshot === null) return h('p', { class: 'meta' }, 'Waiting for the bot…');
  const s = snapshot;
  const bot = s.bot;
  const state = s.trading.state || 'unknown';
  const started = bot && bot.startedAt ? Date.parse(bot.startedAt) : null;
  const deadman = s.deadman;
  const rec = s.reconciliation;
  const asset = (s.account && s.account.settlement_asset) || '';
  return h('div', null, [
    h('header', null, [
      h('h1', null, 'paperbot'),
      h('span', { class: `badge ${state}`, id: 'trading-state' }, state),
      h('span', { id: 'trading-reason', class: 'meta' }, s.trading.reason || ''),
      h(
        'span',
        {
          class: live === 'live' ? 'live' : `live ${live === 'polling' ? 'polling' : 'stale'}`,
          id: 'live',
        },
        live === 'live' ? '● live' : live === 'polling' ? '● polling' : '● disconnected',
      ),
    ]),
    s.venueKey && s.venueKey.state !== 'valid'
      ? h(
          'p',
          {
            class: `notice ${s.venueKey.state === 'expiring' ? 'warn' : 'error'}`,
            id: 'venue-key',
          },
          `venue key ${s.venueKey.state}: ${s.venueKey.reason || ''}`,
        )
      : null,
    h(Controls, null),
    h('div', { class: 'cards' }, [
      h(Card, { label: 'Trading since', value: time(s.trading.since) }),
      h(Card, {
        label: 'May trade (ACTIVE, reconciled, dead-man armed, routes ready)',
        id: 'may-trade',
        value: s.trading.mayTrade ? 'yes' : 'no',
      }),
      h(Card, {
        label: 'Order routes',
        id: 'routes',
        value: s.routes
          ? `${s.routes.ready ? 'ready' : 'not ready'} since ${time(s.routes.since)}`
          : '-',
      }),
      h(Card, {
        label: 'Stream',
        id: 'stream-state',
        value: s.stream ? `${s.stream.state} since ${time(s.stream.since)}` : '-',
      }),
      h(Card, {
        label: 'Dead-man',
        id: 'deadman',
        value:
          deadman === null
            ? 'disabled'
            : deadman.deadlineAt === null
              ? deadman.phase
              : `${deadman.phase}, deadline ${time(deadman.deadlineAt)} (in ${duration(deadman.deadlineAt - s.now)}), last ${text(deadman.lastRequestId)}`,
      }),
      h(Card, {
        label: 'Last reconciliation',
        id: 'reconciliation',
        value:
          rec === null
            ? s.reconciled
              ? 'reconciled'
              : 'not yet'
            : `${time(rec.at)} ${rec.reason}: ${rec.ok ? rec.summary : rec.error}`,
      }),
      h(Card, { label: 'Journal', value: bot ? bot.journal : '-' }),
      h(Card, {
        label: 'Uptime',
        id: 'uptime',
        value: started === null ? '-' : duration(s.now - started),
      }),
      h(Card, {
        label: 'Intents',
        id: 'counters',
        value: s.intents.counters
          ? `${s.intents.counters.intents} (accepted ${s.intents.counters.accepted}, denied ${s.intents.counters.denied}, rejected ${s.intents.counters.rejected}); fills ${s.intents.counters.fills}`
          : '-',
      }),
    ]),
    h('h2', null, 'Account'),
    h('div', { class: 'cards' }, [
      h(Card, {
        label: `Equity ${asset}`,
        id: 'equity',
        value: text(s.account && s.account.total_equity),
      }),
      h(Card, { label: 'Available', value: text(s.account && s.account.available) }),
      h(Card, {
        label: s.today ? `PnL today (since ${time(s.today.since)} UTC)` : 'PnL today',
        id: 'pnl-today',
        value: signed(s.today && s.today.pnl),
      }),
      h(Card, { label: 'PnL since start', id: 'pnl', value: signed(s.pnl && s.pnl.session) }),
      h(Card, { label: 'Unrealized', value: signed(s.pnl && s.pnl.unrealized) }),
    ]),
    h(EquityChart, { points: s.equity }),
    h('h2', null, `Positions (${s.positions.length})`),
    h(Table, {
      id: 'positions',
      empty: 'No positions.',
      headers: ['Market', 'Side', 'Quantity', 'Entry', 'Mark', 'Unrealized'],
      rows: s.positions.map((p) => ({
        text: [0, 1],
        cells: [
          p.market_id,
          p.side,
          p.quantity,
          p.entry_price,
          text(p.mark_price),
          signed(p.unrealized_pnl),
        ],
      })),
    }),
    h('h2', null, `Open orders (${s.openOrders.length})`),
    h(Table, {
      id: 'open-orders',
      empty: 'No open orders.',
      headers: [
        'Market',
        'Side',
        'Price',
        'Quantity',
        'Filled',
        'Status',
        'Age',
        'From mark',
        'Client order id',
      ],
      rows: s.openOrders.map((o) => ({
        text: [0, 1, 5, 8],
        cells: [
          o.marketId,
          text(o.side),
          text(o.price),
          text(o.quantity),
          o.filled,
          o.status,
          duration(o.ageMs),
          o.distancePercent === null ? '-' : `${o.distancePercent}%`,
          text(o.clientOrderId),
        ],
      })),
    }),
    h('h2', null, `Waiting exits (${s.waitingExits.length})`),
    h(Table, {
      id: 'waiting-exits',
      empty: 'No emulated exit is waiting.',
      headers: [
        'Strategy',
        'Market',
        'Kind',
        'Side',
        'Quantity',
        'Trigger',
        'Price',
        'To go',
        'State',
      ],
      rows: s.waitingExits.map((e) => ({
        text: [0, 1, 2, 3, 8],
        cells: [
          e.strategyId,
          e.marketId,
          e.kind,
          e.side,
          e.quantity,
          text(e.triggerPrice),
          text(e.price),
          text(e.distance),
          e.state,
        ],
      })),
    }),
    h('h2', null, 'Recent fills'),
    h(Table, {
      id: 'fills',
      empty: 'No fills yet.',
      headers: ['Time', 'Market', 'Side', 'Quantity', 'Price', 'Fee', 'Strategy'],
      rows: s.fills.map((f) => ({
        text: [1, 2, 6],
        cells: [time(f.at), f.marketId, f.side, f.quantity, f.price, f.fee, text(f.strategyId)],
      })),
    }),
    h('h2', null, 'Recent intents and denials'),
    h(Table, {
      id: 'intents',
      empty: 'No intents yet.',
      headers: ['Time', 'Strategy', 'Kind', 'Market', 'Outcome', 'Why'],
      rows: s.recentIntents.map((i) => ({
        className: i.status === 'denied' || i.status === 'rejected' ? 'loss' : '',
        text: [1, 2, 3, 4, 5],
        cells: [time(i.at), i.strategyId, i.kind, text(i.marketId), i.status, text(i.reason)],
      })),
    }),
    h('h2', null, 'Strategies'),
    h(Table, {
      id: 'strategies',
      empty: 'No strategies.',
      headers: [
        'Id',
        'Plugin',
        'State',
        'Open orders',
        'Fills',
        'PnL (session)',
        'Last intent',
        'Parameters',
      ],
      rows: s.strategies.map((st) => ({
        text: [0, 1, 2, 6, 7],
        cells: [
          st.id,
          st.name,
          st.state,
          String(st.openOrders),
          String(st.fills),
          signed(st.pnl),
          st.lastIntent === null
            ? '-'
            : `${time(st.lastIntent.at)} ${st.lastIntent.kind} ${st.lastIntent.status}`,
          h('pre', { class: 'params' }, JSON.stringify(st.params)),
        ],
      })),
    }),
    s.notifications && s.notifications.length > 0
      ? [
          h('h2', null, 'Notifications'),
          h(Table, {
            id: 'notifications',
            empty: 'No webhooks.',
            headers: [
              'Webhook',
              'Sent messages',
              'Sent events',
              'Failed attempts',
              'Dropped events',
              'Queued',
              'State',
            ],
            rows: s.notifications.map((w) => ({
              text: [0, 6],
              className: w.down ? 'loss' : '',
              cells: [
                w.webhook,
                String(w.sentMessages),
                String(w.sentEvents),
                String(w.failedAttempts),
                String(w.droppedEvents),
                String(w.queued),
                w.down ? 'down' : 'up',
              ],
            })),
          }),
        ]
      : null,
    h('h2', null, 'Recent warnings and errors'),
    s.notices.length === 0
      ? h('p', { class: 'none', id: 'notices' }, 'None.')
      : h(
          'div',
          { id: 'notices' },
          s.notices.map((n) =>
            h('p', { class: `notice ${n.level}` }, `${time(n.at)} ${n.message}`),
          ),
        ),
    h(
      'p',
      { class: 'meta' },
      bot
        ? `pid ${bot.pid}, venue ${bot.venue.baseUrl}${bot.venue.embedded ? ' (embedded emulator)' : ''}, account ${bot.venue.accountId}`
        : '',
    ),
  ]);
}

// Live updates over Server-Sent Events; when the bot refuses the stream or gives its place to a
// newer one (`reaped`), the page reads the snapshot every POLL_MS instead, controls unchanged.
function App() {
  const [snapshot, setSnapshot] = useState(firstSnapshot);
  const [live, setLive] = useState('disconnected');
  useEffect(() => {
    let poller = null;
    const poll = () => {
      fetch('/dashboard/snapshot', { cache: 'no-store' })
        .then((response) => (response.ok ? response.json() : null))
        .then(
          (document) => {
            if (document !== null) setSnapshot(document);
            setLive(document === null ? 'disconnected' : 'polling');
          },
          () => setLive('disconnected'),
        );
    };
    const startPolling = () => {
      if (poller !== null) return;
      source.close();
      poll();
      poller = window.setInterval(poll, POLL_MS);
    };
    const source = new EventSource('/dashboard/events');
    source.addEventListener('snapshot', (event) => {
      setSnapshot(JSON.parse(event.data));
      setLive('live');
    });
    source.addEventListener('reaped', startPolling);
    source.onerror = () => {
      // CLOSED: the answer was not a stream (503, 401...) and EventSource gives up for good.
      if (source.readyState === EventSource.CLOSED) startPolling();
      else setLive('disconnected');
    };
    return () => {
      source.close();
      if (poller !== null) window.clearInterval(poller);
    };
  }, []);
  return h(Dashboard, { snapshot, live });
}

render(h(App, null), document.getElementById('app'));
