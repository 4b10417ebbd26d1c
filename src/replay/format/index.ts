/** The recorded-data format: records, manifest, writer, recording sink, readers and cache. */
export * from './binary-codec.ts';
export * from './cache.ts';
export * from './event-log-reader.ts';
export * from './event-log-writer.ts';
export * from './manifest.ts';
export * from './merge.ts';
export * from './recorder-sink.ts';
export * from './recording.ts';
export * from './records.ts';
export * from './candle-history.ts';
export * from './integrity.ts';
export * from './verify.ts';
