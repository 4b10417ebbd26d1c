/**
 * The `/status` document of a running bot and its text rendering for `paperbot status`.
 * The document is the kernel's status plus what only the process knows (venue, journal,
 * uptime) and the session's PnL. Money is carried as decimal strings throughout.
 */
import { z } from 'zod';
import { isoTimestamp } from '../../core/clock.ts';
import { isDecimalString, parseDecimal, toWire } from '../../core/decimal.ts';
import { durationText } from '../../core/duration.ts';
import { type Alignment, formatTable } from '../../core/text-table.ts';

const Text = z.string();
const NullableText = z.string().nullable();

/** What `paperbot status` needs of the document; anything else is passed through. */
export const StatusDocument = z.looseObject({
  bot: z.looseObject({
    pid: z.number(),
    startedAt: NullableText,
    now: Text,
    venue: z.looseObject({ baseUrl: Text, embedded: z.boolean(), accountId: Text }),
    journal: Text,
  }),
  tradingState: Text,
  tradingReason: NullableText,
  mayTrade: z.boolean(),
  /** Optional: a bot from before these fields still reads. */
  refusing: z.array(z.looseObject({ gate: Text, reason: Text })).optional(),
  routeReadiness: z
    .looseObject({
      ready: z.boolean(),
      reason: NullableText,
      error: z.looseObject({ code: Text, message: Text, cause: NullableText }).nullable(),
      checkedAt: z.number().nullable(),
    })
    .nullable()
    .optional(),
  /** Optional: tolerant reading, what the venue sent that the project does not know. */
  reading: z
    .looseObject({
      mode: Text,
      unknownFields: z.number(),
      unknownValues: z.number(),
      skippedItems: z.number(),
      refused: z.number(),
      lastProblem: z.looseObject({ message: Text }).nullable(),
    })
    .nullable()
    .optional(),
  reconciled: z.boolean(),
  deadman: z
    .looseObject({ phase: Text, deadlineAt: z.number().nullable(), reason: Text.optional() })
    .nullable(),
  unknownIntents: z.number(),
  unresolvedIntents: z.number(),
  account: z
    .looseObject({
      total_equity: Text,
      available: Text,
      unrealized_pnl: Text,
      settlement_asset: Text.optional(),
    })
    .nullable(),
  positions: z.array(
    z.looseObject({
      market_id: Text,
      side: Text,
      quantity: Text,
      entry_price: Text,
      mark_price: NullableText,
      unrealized_pnl: NullableText,
    }),
  ),
  openOrders: z.array(
    z.looseObject({
      market_id: Text,
      side: NullableText,
      type: NullableText,
      price: NullableText,
      quantity: NullableText,
      filled_quantity: Text,
      status: Text,
      client_order_id: NullableText,
    }),
  ),
  strategies: z.array(z.looseObject({ id: Text, status: Text, nextSequence: z.number() })),
  counters: z.looseObject({
    intents: z.number(),
    denied: z.number(),
    rejected: z.number(),
    accepted: z.number(),
    unknown: z.number(),
    fills: z.number(),
  }),
  /** Emulated exits still live; absent from the documents of bots without them. */
  waitingExits: z
    .array(
      z.looseObject({
        id: Text,
        marketId: Text,
        side: Text,
        quantity: Text,
        state: Text,
        kind: Text,
        source: Text,
        triggerPrice: NullableText,
        price: NullableText,
        distance: NullableText,
      }),
    )
    .optional(),
  pnl: z.looseObject({
    equity: NullableText,
    startEquity: NullableText,
    session: NullableText,
    unrealized: NullableText,
  }),
  /** The venue key's state; absent from the documents of older bots. */
  venueKey: z
    .looseObject({ state: Text, reason: NullableText, expiresAt: NullableText })
    .nullable()
    .optional(),
});
export type StatusDocument = z.infer<typeof StatusDocument>;

/** Equity change since the bot started, or null while either figure is unknown. */
export function sessionPnl(startEquity: string | null, equity: string | null): string | null {
  if (startEquity === null || equity === null) return null;
  if (!isDecimalString(startEquity) || !isDecimalString(equity)) return null;
  return toWire(parseDecimal(equity).minus(parseDecimal(startEquity)));
}

function signed(value: string | null): string {
  if (value === null) return '-';
  return value.startsWith('-') || /^0(\.0*)?$/.test(value) ? value : `+${value}`;
}

/** Left-aligned columns, the header marked by its capitals only, indented under its title. */
function statusTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const align = headers.map((): Alignment => 'left');
  return formatTable(headers, rows, { align, rule: false })
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

/** The text `paperbot status` prints. */
export function renderStatus(status: StatusDocument, source: string): string {
  const now = Date.parse(status.bot.now);
  const started = status.bot.startedAt === null ? null : Date.parse(status.bot.startedAt);
  const asset = status.account?.settlement_asset ?? '';
  const out: string[] = [];
  out.push(
    `paperbot status from ${source} (pid ${status.bot.pid}${
      started === null ? '' : `, up ${durationText(Math.max(0, now - started))}`
    })`,
  );
  out.push(
    `Venue:      ${status.bot.venue.baseUrl}${status.bot.venue.embedded ? ' (embedded emulator)' : ''}, account ${status.bot.venue.accountId}`,
  );
  out.push(`Journal:    ${status.bot.journal}`);
  out.push(
    `Trading:    ${status.tradingState}${status.tradingReason === null ? '' : ` (${status.tradingReason})`}; may trade: ${
      status.mayTrade ? 'yes' : 'no'
    }; reconciled: ${status.reconciled ? 'yes' : 'no'}`,
  );
  for (const entry of status.refusing ?? []) {
    out.push(`Refusing:   ${entry.gate}: ${entry.reason}`);
  }
  const key = status.venueKey;
  if (key !== null && key !== undefined) {
    out.push(
      `Venue key:  ${key.state}${key.reason === null ? (key.expiresAt === null ? '' : `, expires ${key.expiresAt}`) : ` (${key.reason})`}`,
    );
  }
  const readiness = status.routeReadiness;
  if (readiness !== null && readiness !== undefined) {
    const error = readiness.error;
    const failure =
      error === null
        ? null
        : `${error.code}: ${error.message}${error.cause === null ? '' : ` (cause: ${error.cause})`}`;
    const line = readiness.ready
      ? `ready${failure === null ? '' : `; last read failed: ${failure}`}`
      : `not ready: ${failure ?? readiness.reason ?? 'no reason given'}`;
    out.push(`Route:      ${line}`);
  }
  const reading = status.reading;
  if (reading !== null && reading !== undefined) {
    out.push(
      `Reading:    ${reading.mode}; ${reading.unknownFields} unknown fields, ${reading.unknownValues} unknown values, ${reading.skippedItems} items left out, ${reading.refused} refused${
        reading.lastProblem === null ? '' : `; last: ${reading.lastProblem.message}`
      }`,
    );
  }
  const deadman = status.deadman;
  out.push(
    `Dead-man:   ${
      deadman === null
        ? 'disabled'
        : deadman.deadlineAt === null
          ? deadman.phase
          : `${deadman.phase}, orders cancelled by the venue at ${isoTimestamp(deadman.deadlineAt)} (in ${durationText(Math.max(0, deadman.deadlineAt - now))}) unless refreshed`
    }`,
  );
  const counters = status.counters;
  out.push(
    `Intents:    ${counters.intents} (accepted ${counters.accepted}, rejected ${counters.rejected}, denied ${counters.denied}, unknown ${counters.unknown}); still unknown ${status.unknownIntents}, unresolved ${status.unresolvedIntents}; fills ${counters.fills}`,
  );
  if (status.account === null) {
    out.push('Account:    not read yet');
  } else {
    out.push(
      `Account:    equity ${status.account.total_equity} ${asset}, available ${status.account.available}`.trimEnd(),
    );
  }
  out.push(
    `PnL:        session ${signed(status.pnl.session)} (since equity ${status.pnl.startEquity ?? '-'}), unrealized ${signed(status.pnl.unrealized)}`,
  );
  out.push('');
  out.push('Strategies');
  out.push(
    statusTable(
      ['ID', 'STATUS', 'NEXT SEQUENCE'],
      status.strategies.map((strategy) => [
        strategy.id,
        strategy.status,
        String(strategy.nextSequence),
      ]),
    ),
  );
  out.push('');
  out.push(`Positions (${status.positions.length})`);
  if (status.positions.length > 0) {
    out.push(
      statusTable(
        ['MARKET', 'SIDE', 'QUANTITY', 'ENTRY', 'MARK', 'UNREALIZED PNL'],
        status.positions.map((position) => [
          position.market_id,
          position.side,
          position.quantity,
          position.entry_price,
          position.mark_price ?? '-',
          signed(position.unrealized_pnl),
        ]),
      ),
    );
  }
  out.push('');
  out.push(`Open orders (${status.openOrders.length})`);
  if (status.openOrders.length > 0) {
    out.push(
      statusTable(
        ['MARKET', 'SIDE', 'TYPE', 'PRICE', 'QUANTITY', 'FILLED', 'STATUS', 'CLIENT ORDER ID'],
        status.openOrders.map((order) => [
          order.market_id,
          order.side ?? '-',
          order.type ?? '-',
          order.price ?? '-',
          order.quantity ?? '-',
          order.filled_quantity,
          order.status,
          order.client_order_id ?? '-',
        ]),
      ),
    );
  }
  const exits = status.waitingExits;
  if (exits !== undefined) {
    out.push('');
    out.push(`Waiting exits (${exits.length}; emulated by the bot, unwatched while it is down)`);
    if (exits.length > 0) {
      out.push(
        statusTable(
          [
            'ID',
            'MARKET',
            'SIDE',
            'KIND',
            'SOURCE',
            'STATE',
            'QUANTITY',
            'TRIGGER',
            'PRICE',
            'DISTANCE',
          ],
          exits.map((exit) => [
            exit.id,
            exit.marketId,
            exit.side,
            exit.kind,
            exit.source,
            exit.state,
            exit.quantity,
            exit.triggerPrice ?? '-',
            exit.price ?? '-',
            exit.distance ?? '-',
          ]),
        ),
      );
    }
  }
  return `${out.join('\n')}\n`;
}
