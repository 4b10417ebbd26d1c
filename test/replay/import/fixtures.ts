/**
 * Small CSV files the import tests write: a price walk on a 0.1 tick, its book as L2 updates
 * (one level each side, moved every second) and its trades, which alternate sides at the touch
 * and sometimes sweep a few ticks, so a market maker's quotes get reached.
 */
import { writeFile } from 'node:fs/promises';

export const START_MS = Date.UTC(2025, 2, 1);

/** A deterministic walk in ticks (Park-Miller's generator, exact in doubles, seed fixed). */
export function priceWalk(seconds: number): number[] {
  let state = 12345;
  let ticks = 1000; // 100.0
  const prices: number[] = [];
  for (let second = 0; second < seconds; second++) {
    state = (state * 48271) % 2147483647;
    ticks += (state % 7) - 3;
    prices.push(ticks);
  }
  return prices;
}

export const tickText = (ticks: number) => (ticks / 10).toFixed(1);

export async function writeBookUpdates(path: string, seconds: number): Promise<void> {
  const lines = ['timestamp,side,price,quantity'];
  let previous: number | null = null;
  priceWalk(seconds).forEach((ticks, second) => {
    const t = START_MS + second * 1000 + 250;
    if (previous !== null) {
      lines.push(`${t},bid,${tickText(previous - 1)},0`, `${t},ask,${tickText(previous + 1)},0`);
    }
    lines.push(`${t},bid,${tickText(ticks - 1)},5`, `${t},ask,${tickText(ticks + 1)},5`);
    previous = ticks;
  });
  await writeFile(path, `${lines.join('\n')}\n`);
}

export async function writeTrades(path: string, seconds: number): Promise<void> {
  const lines = ['time,px,qty,side'];
  priceWalk(seconds).forEach((ticks, second) => {
    const t = START_MS + second * 1000 + 500;
    const buy = second % 2 === 0;
    const sweep = second % 5 === 0 ? 8 : 1;
    lines.push(`${t},${tickText(buy ? ticks + sweep : ticks - sweep)},0.5,${buy ? 'buy' : 'sell'}`);
  });
  await writeFile(path, `${lines.join('\n')}\n`);
}
