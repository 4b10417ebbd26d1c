/**
 * Turns measured delays into the replay's latency settings: each leg as quantiles at equal
 * steps (`latency.distribution`), its median as the plain `<leg>_ms`.
 *
 * The journal measures the event leg directly and each command's round trip (order plus
 * response leg), not where the round trip splits. With a recording of the same session's private
 * events, the venue's time of each cancel splits it: order leg from emission to the venue's
 * CANCELLED event, response leg from there to the answer. Without one, the response travels the
 * way events do (venue to bot), so the response leg is taken to be distributed as the event leg,
 * and the order leg is the round trip less the event leg's median: exact when the way back is
 * steady, and the order leg keeps the round trip's whole spread.
 */
import { PaperbotError } from '../../core/errors.ts';
import { LatencyConfig } from '../venue/config.ts';
import type { JournalSamples } from './journal-samples.ts';

/** Quantiles written per leg: 0, 0.05, ..., 1. */
export const CALIBRATION_QUANTILES = 21;

/** Samples a leg needs before its distribution means anything. */
export const MINIMUM_SAMPLES = 10;

export interface LegFit {
  readonly samples: number;
  readonly mean: number;
  readonly quantiles: readonly number[];
}

export interface LatencyFit {
  readonly order: LegFit;
  readonly response: LegFit;
  readonly event: LegFit;
  /** The settings as `venue.latency` takes them (checked against its schema). */
  readonly config: LatencyConfig;
  /** How the round trips were split. */
  readonly split: 'recording' | 'event-leg';
}

/** Quantile `p` of sorted values, linear between neighbours. */
function quantile(sorted: readonly number[], p: number): number {
  const position = p * (sorted.length - 1);
  const index = Math.floor(position);
  const low = sorted[index]!;
  const high = sorted[Math.min(sorted.length - 1, index + 1)]!;
  return low + (high - low) * (position - index);
}

function fitLeg(name: string, values: readonly number[]): LegFit {
  if (values.length < MINIMUM_SAMPLES) {
    throw new PaperbotError(
      'CALIBRATION_TOO_FEW_SAMPLES',
      `the ${name} leg has ${values.length} samples; at least ${MINIMUM_SAMPLES} are needed`,
      { details: { leg: name, samples: values.length, minimum: MINIMUM_SAMPLES } },
    );
  }
  // Clock skew can make a venue-to-bot delay read negative: no leg is shorter than nothing.
  const sorted = values.map((value) => Math.max(0, value)).sort((a, b) => a - b);
  const quantiles: number[] = [];
  for (let index = 0; index < CALIBRATION_QUANTILES; index++) {
    quantiles.push(Math.round(quantile(sorted, index / (CALIBRATION_QUANTILES - 1))));
  }
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return { samples: sorted.length, mean, quantiles };
}

function median(fit: LegFit): number {
  return fit.quantiles[(CALIBRATION_QUANTILES - 1) / 2]!;
}

/**
 * The fit of `samples`; with `appliedAt` (the venue's time of each cancelled order, from a
 * recording: `cancelAppliedTimes`), the round trips split as measured.
 */
export function fitLatency(
  samples: JournalSamples,
  appliedAt?: ReadonlyMap<string, number>,
): LatencyFit {
  const event = fitLeg('event', samples.eventLegs);
  let order: LegFit;
  let response: LegFit;
  if (appliedAt === undefined) {
    const back = median(event);
    response = event;
    order = fitLeg(
      'order (cancel round trips)',
      samples.roundTrips.map((roundTrip) => roundTrip - back),
    );
  } else {
    const orderLegs: number[] = [];
    const responseLegs: number[] = [];
    for (const cancel of samples.cancels) {
      const at = cancel.orderId === null ? undefined : appliedAt.get(cancel.orderId);
      if (at === undefined) continue;
      orderLegs.push(at - cancel.emittedAt);
      responseLegs.push(cancel.answeredAt - at);
    }
    order = fitLeg('order (cancels found in the recording)', orderLegs);
    response = fitLeg('response (cancels found in the recording)', responseLegs);
  }
  const config = LatencyConfig.parse({
    order_ms: median(order),
    response_ms: median(response),
    event_ms: median(event),
    read_ms: 0,
    jitter_ms: 0,
    distribution: {
      order_ms: order.quantiles,
      response_ms: response.quantiles,
      event_ms: event.quantiles,
    },
  });
  return {
    order,
    response,
    event,
    config,
    split: appliedAt === undefined ? 'event-leg' : 'recording',
  };
}

function leg(fit: LegFit): string {
  return `${fit.samples} samples, mean ${fit.mean.toFixed(1)} ms, median ${median(fit)} ms, p95 ${fit.quantiles[19]} ms`;
}

/** The fit as a YAML fragment for backtest.yaml's `venue.latency`, with where it came from. */
export function latencyFragment(fit: LatencyFit, source: string): string {
  const list = (values: readonly number[] | undefined) => `[${(values ?? []).join(', ')}]`;
  const config = fit.config;
  return [
    `# paperbot calibrate, from ${source}`,
    ...(fit.split === 'recording'
      ? [
          `# order leg: ${leg(fit.order)} (cancels: emitted to the venue's CANCELLED event)`,
          `# response leg: ${leg(fit.response)} (the venue's CANCELLED event to the answer)`,
        ]
      : [
          `# order leg: ${leg(fit.order)} (cancel round trips less the event leg's median)`,
          `# response leg: as the event leg (the way back is the same)`,
        ]),
    `# event leg: ${leg(fit.event)}`,
    '# Goes under venue: in config/backtest.yaml. Quantiles at steps of 0.05, in ms.',
    'latency:',
    `  order_ms: ${config.order_ms}`,
    `  response_ms: ${config.response_ms}`,
    `  event_ms: ${config.event_ms}`,
    `  read_ms: ${config.read_ms}`,
    `  jitter_ms: ${config.jitter_ms}`,
    '  distribution:',
    `    order_ms: ${list(config.distribution?.order_ms)}`,
    `    response_ms: ${list(config.distribution?.response_ms)}`,
    `    event_ms: ${list(config.distribution?.event_ms)}`,
    '',
  ].join('\n');
}
