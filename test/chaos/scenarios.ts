/**
 * The chaos scenarios of issue 11. Seeds are fixed; every duration is written here. `short`
 * scales the trading time of a scenario down for the smoke test in `npm test`.
 */
import { systemClock } from '../../src/core/clock.ts';
import { Journal } from '../../src/runtime/journal/index.ts';
import { type BotChild, delay, FIXTURE_STRATEGIES } from '../bot/helpers.ts';
import type { Scenario, ScenarioContext } from './harness.ts';
import { driveHostileFiles } from './hostile-files.ts';
import type { FrameAction, HttpAction, InjectedError, RequestInfo } from './proxy.ts';

const FORWARD: HttpAction = { kind: 'forward' };
/** The client's whole-request timeout in every scenario (venue.request_timeout_ms). */
const REQUEST_TIMEOUT_MS = 2_000;

/** True on every n-th call. */
function everyNth(n: number): () => boolean {
  let count = 0;
  return () => ++count % n === 0;
}

/** Trade for `ms`, then stop cleanly; the exit code is checked by the harness. */
async function tradeThenStop(context: ScenarioContext, ms: number): Promise<void> {
  const child = await context.start();
  await context.submissions(child, 2);
  await delay(ms);
  await context.stopCleanly(child);
}

function afterCommit(name: string, seed: number, tradeMs: number, error: InjectedError): Scenario {
  return {
    name,
    venue: 'emulator',
    seed,
    timeLimitMs: tradeMs + 60_000,
    setup(proxy) {
      const third = everyNth(3);
      proxy.policy = {
        http: (request) =>
          request.mutation && third() ? { kind: 'error_after_commit', error } : FORWARD,
      };
    },
    drive: (context) => tradeThenStop(context, tradeMs),
  };
}

function rateLimited(retryAfter: (now: number) => string): InjectedError {
  return {
    status: 429,
    code: 'RATE_LIMITED',
    retryable: true,
    headers: { 'retry-after': retryAfter(systemClock.now()) },
  };
}

/** 429 storms: 1.5 s of every 4 s every request is refused, and 2 s from the stop signal. */
function storm(
  name: string,
  seed: number,
  tradeMs: number,
  retryAfter: (now: number) => string,
): Scenario {
  let stormUntil = 0;
  const inStorm = () => systemClock.now() < stormUntil;
  return {
    name,
    venue: 'emulator',
    seed,
    timeLimitMs: tradeMs + 60_000,
    setup(proxy) {
      stormUntil = 0;
      proxy.policy = {
        http: (): HttpAction =>
          inStorm() ? { kind: 'error_before_commit', error: rateLimited(retryAfter) } : FORWARD,
      };
    },
    async drive(context) {
      const child = await context.start();
      await context.submissions(child, 2);
      const end = systemClock.now() + tradeMs;
      while (systemClock.now() < end) {
        await delay(2_500);
        stormUntil = systemClock.now() + 1_500;
        await delay(1_500);
      }
      await context.stopCleanly(child, {
        beforeSignal: () => {
          stormUntil = systemClock.now() + 2_000;
        },
      });
    },
  };
}

/** The sum of a counter's series in a Prometheus text page. */
function counterSum(page: string, name: string): number {
  let sum = 0;
  for (const line of page.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) {
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return sum;
}

/** The fill ids of `child`'s log lines of one kind: the `fill` event, or a message. */
function fillIdsOf(child: BotChild, kind: { event: string } | { msg: string }): string[] {
  return child.records
    .filter(
      (record) =>
        ('event' in kind ? record.event === kind.event : record.msg === kind.msg) &&
        typeof record.fill_id === 'string',
    )
    .map((record) => record.fill_id as string);
}

/**
 * Issue 24: the real bot, reading tolerantly, trades against the minimal server in additive
 * mode (a field in every object, an unknown event type, extra keys in every event's data,
 * unknown values in the open enums). Besides the common figures, each venue fill must reach the
 * journal, the strategy API (the `fill-witness` strategy logs what it gets), the fill log and
 * the fill metric exactly once; nothing is refused or left out, the private stream never loses
 * continuity, and the unknown fields are counted and logged once per shape and field. With
 * `breakEvery`, every n-th order or fill event breaks its schema (on the stream and in the log
 * alike): each is reported, and resolved by reading back, so the figures stay 0 all the same.
 */
export function additiveScenario(tradeMs: number, breakEvery = 0): Scenario {
  const broken = breakEvery > 0;
  return {
    name: broken ? 'minimal-server-broken-events' : 'minimal-server-additive',
    venue: 'minimal-additive',
    ...(broken ? { breakEvery } : {}),
    seed: broken ? 114 : 113,
    timeLimitMs: tradeMs + 60_000,
    config: {
      venue: { reading: 'tolerant' },
      strategies_dir: FIXTURE_STRATEGIES,
      strategies: [
        {
          id: 'steady',
          name: 'steady-submitter',
          params: {
            marketId: 'BTC-PERP',
            intervalMs: 100,
            maxOpen: 3,
            offsetTicks: 1,
            churn: false,
          },
        },
        { id: 'witness', name: 'fill-witness', params: {} },
      ],
    },
    async drive(context) {
      const child = await context.start();
      await context.submissions(child, 2);
      await delay(tradeMs);
      // No new fills from here; the metrics are read while the bot still runs.
      context.venue.quiesce();
      await delay(3_000);
      const started = child.records.find((record) => record.event === 'bot.started');
      const metricsUrl = typeof started?.metrics === 'string' ? started.metrics : null;
      const page = metricsUrl === null ? '' : await (await fetch(metricsUrl)).text();
      const loggedAtScrape = fillIdsOf(child, { event: 'fill' }).length;
      const metricFills = counterSum(page, 'paperbot_fills_total');
      context.noteText(`at the scrape: ${metricFills} fills counted, ${loggedAtScrape} logged`);
      await context.stopCleanly(child);

      const venueFills = context.venue.fills(context.accountId).map((fill) => fill.fill_id);
      context.note('no_venue_fills', venueFills.length === 0 ? 1 : 0);
      const witnessed = fillIdsOf(child, { msg: 'witness saw a fill' });
      const seen = new Set(witnessed);
      context.note('strategy_lost_fills', venueFills.filter((id) => !seen.has(id)).length);
      context.note('strategy_double_counted', witnessed.length - seen.size);
      context.note('metric_not_log', Math.abs(metricFills - loggedAtScrape));
      context.note(
        'unknown_fields_not_counted',
        /paperbot_venue_unknown_fields_total\{shape="Market",field="svc_ext"\} [1-9]/.test(page) &&
          /shape="OrderStatusEventData",field="reason"/.test(page)
          ? 0
          : 1,
      );
      const warnings = child.records.filter((record) => record.event === 'venue.unknown_field');
      const pairs = warnings.map((record) => `${String(record.shape)}.${String(record.field)}`);
      context.note('unknown_field_logged_twice', pairs.length - new Set(pairs).size);
      const refused = child.records.filter(
        (record) => record.event === 'venue.refused' || record.event === 'venue.item_left_out',
      ).length;
      const unreadable = child.records.filter(
        (record) => record.msg === 'a private event breaks its schema; what it said is read back',
      );
      context.noteText(
        `unreadable events resolved: ${unreadable.length} (fills ${
          unreadable.filter((record) => record.channel === 'fills').length
        })`,
      );
      // With broken events, they must be met (and then resolved: the other figures).
      if (broken) context.note('no_broken_event_met', refused === 0 ? 1 : 0);
      else context.note('refused_or_left_out', refused);
      context.note(
        'continuity_lost',
        child.records.filter((record) => record.msg === 'private stream continuity lost').length,
      );
      const journal = Journal.open(context.journalPath, { now: () => systemClock.now() });
      try {
        context.note(
          'journal_unseen_fills',
          venueFills.filter((id) => !journal.hasSeenFill(id)).length,
        );
      } finally {
        journal.close();
      }
    },
  };
}

const SECONDS = (): string => '1';
const HTTP_DATE = (now: number): string => new Date(now + 2_000).toUTCString();

export function allScenarios(options: { short?: boolean } = {}): Scenario[] {
  const trade = options.short === true ? 4_000 : 12_000;
  return [
    {
      name: 'response-lost-after-commit',
      venue: 'emulator',
      seed: 101,
      timeLimitMs: trade + 60_000,
      setup(proxy) {
        const third = everyNth(3);
        proxy.policy = {
          http: (request: RequestInfo): HttpAction =>
            request.mutation && third() ? { kind: 'drop_response' } : FORWARD,
        };
      },
      drive: (context) => tradeThenStop(context, trade),
    },
    {
      name: 'response-held-past-timeout',
      venue: 'emulator',
      seed: 102,
      timeLimitMs: trade + 60_000,
      setup(proxy) {
        const third = everyNth(3);
        proxy.policy = {
          http: (request: RequestInfo): HttpAction =>
            request.mutation && third()
              ? { kind: 'hold_response', ms: REQUEST_TIMEOUT_MS + 1_000 }
              : FORWARD,
        };
      },
      drive: (context) => tradeThenStop(context, trade),
    },
    afterCommit('503-after-commit-retryable', 103, trade, {
      status: 503,
      code: 'EXECUTION_UNAVAILABLE',
      retryable: true,
    }),
    afterCommit('503-after-commit-final', 104, trade, {
      status: 503,
      code: 'EXECUTION_UNAVAILABLE',
      retryable: false,
    }),
    storm('429-storm-seconds', 105, trade, SECONDS),
    storm('429-storm-http-date', 106, trade, HTTP_DATE),
    {
      name: 'ws-drop-dup-reorder-cut',
      venue: 'emulator',
      seed: 107,
      cutWebSocketsEveryMs: 10_000,
      timeLimitMs: 90_000,
      setup(proxy, random) {
        proxy.policy = {
          privateFrame: (): FrameAction => {
            const draw = random();
            if (draw < 0.01) return 'drop';
            if (draw < 0.02) return 'duplicate';
            if (draw < 0.03) return 'reorder';
            return 'pass';
          },
        };
      },
      // Long enough for two cuts.
      drive: (context) => tradeThenStop(context, options.short === true ? 11_000 : 25_000),
    },
    {
      name: 'sigkill-x50-same-journal',
      venue: 'emulator',
      seed: 108,
      timeLimitMs: 420_000,
      config: {
        strategies_dir: FIXTURE_STRATEGIES,
        strategies: [
          {
            id: 'steady',
            name: 'steady-submitter',
            params: { marketId: 'BTC-PERP', intervalMs: 40, maxOpen: 4, offsetTicks: 3 },
          },
        ],
        risk: { max_orders_per_second: 100, max_orders_per_minute: 6_000 },
        execution: { resolution_base_delay_ms: 50 },
      },
      async drive(context) {
        const kills = options.short === true ? 5 : 50;
        for (let index = 0; index < kills; index++) {
          const child = context.spawn();
          const target = 1 + Math.floor(context.random() * 3);
          let submitted = 0;
          await child.waitFor(
            (record) => record.msg === 'intent submitted' && ++submitted >= target,
            `submission #${target} of run ${index + 1}`,
            30_000,
          );
          await delay(Math.floor(context.random() * 80));
          await context.kill(child);
          context.fault();
          // While the bot is down, the market trades through its resting orders (every other
          // time, seeded).
          if (context.random() < 0.5) context.venue.crossRestingOrders(context.accountId);
        }
        const last = await context.start();
        await context.submissions(last, 3);
        await context.stopCleanly(last);
      },
    },
    {
      name: 'sigstop-past-deadman',
      venue: 'emulator',
      seed: 109,
      timeLimitMs: 90_000,
      // A margin the 3 s timeout can survive (refresh 750 ms + 2 x 500 ms < 3 s), as config requires.
      config: { deadman: { timeout_seconds: 3, latency_margin_ms: 500 } },
      async drive(context) {
        let fired = 0;
        const stop = context.venue.onDeadlineFired(context.accountId, () => {
          fired += 1;
        });
        try {
          const child = await context.start();
          await context.submissions(child, 4);
          child.process.kill('SIGSTOP');
          context.fault();
          const until = systemClock.now() + 10_000;
          while (fired === 0 && systemClock.now() < until) await delay(100);
          // The venue cancelled everything while the bot was stopped (the scenario's premise).
          context.note('deadline_not_fired', fired === 0 ? 1 : 0);
          await delay(1_000);
          child.process.kill('SIGCONT');
          await context.submissions(child, 3);
          await delay(options.short === true ? 2_000 : 5_000);
          await context.stopCleanly(child);
        } finally {
          stop();
        }
      },
    },
    {
      name: 'slow-cancel-all-after',
      venue: 'emulator',
      seed: 110,
      timeLimitMs: 90_000,
      config: { deadman: { timeout_seconds: 10 } },
      setup(proxy) {
        proxy.policy = {
          // 3 s more on each round trip: half before the venue sees it, half on the way back.
          http: (request: RequestInfo): HttpAction =>
            request.method === 'PUT' && request.path === '/v1/cancel-all-after'
              ? { kind: 'delay_request', ms: 1_500, afterMs: 1_500 }
              : FORWARD,
        };
      },
      async drive(context) {
        let fired = 0;
        const stop = context.venue.onDeadlineFired(context.accountId, () => {
          fired += 1;
        });
        try {
          // Order flow is measured, not awaited: a bot that cannot arm never submits.
          const child = await context.start();
          await delay(options.short === true ? 12_000 : 25_000);
          const accepted = child.records.filter(
            (record) => record.event === 'intent.accepted' && record.kind === 'place',
          ).length;
          context.note('no_order_flow', accepted === 0 ? 1 : 0);
          await context.stopCleanly(child);
        } finally {
          stop();
        }
        context.note('deadline_fired', fired);
      },
    },
    {
      name: 'minimal-server',
      venue: 'minimal',
      seed: 111,
      timeLimitMs: trade + 60_000,
      drive: (context) => tradeThenStop(context, trade),
    },
    {
      // The control of the one above: the same server with the contract's open shapes.
      name: 'minimal-server-contract-shapes',
      venue: 'minimal-contract',
      seed: 112,
      timeLimitMs: trade + 60_000,
      drive: (context) => tradeThenStop(context, trade),
    },
    additiveScenario(trade),
    // The same, and every 5th private event breaks its schema: none of them loses a fill.
    additiveScenario(trade, 5),
    {
      // Issue 26: large hostile files refused by import and backtest, in bounded time and memory.
      name: 'hostile-files',
      venue: 'emulator',
      seed: 113,
      timeLimitMs: 600_000,
      drive: driveHostileFiles,
    },
  ];
}

/** The short part that `npm test` runs (test/chaos/chaos-smoke.test.ts). */
export const SMOKE_SCENARIOS = ['response-lost-after-commit', '503-after-commit-retryable'];
