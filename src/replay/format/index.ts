/** The recorded-data format: records, manifest, writer, recording sink, readers and cache. */
export {
  HOST_LITTLE_ENDIAN,
  MAX_ARRAY_ITEMS,
  MAX_DEPTH,
  MAX_TABLE_STRINGS,
  MAX_TEMPLATES,
  MAX_TEMPLATE_SIZE,
} from './block-layout.ts';
export * from './block-encoder.ts';
export * from './block-decoder.ts';
export { DeferredRecord } from './record-templates.ts';
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
