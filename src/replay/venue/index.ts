/** The simulated venue of replays: the emulator's engine driven by recorded data. */
export * from './config.ts';
export * from './exchange-venue.ts';
export * from './latency.ts';
export * from './market-data.ts';
export * from './queue.ts';
export * from './replay-venue.ts';
export * from './private-stream.ts';
export * from './gaps.ts';
