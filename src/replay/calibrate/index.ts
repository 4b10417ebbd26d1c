/** Replay latency calibrated from what a live journal measured (`paperbot calibrate`). */
export * from './fit.ts';
export * from './journal-samples.ts';
export * from './recording-times.ts';
