/**
 * WebSocket send backpressure. A client that sends without reading makes every answer (pongs,
 * error frames, tickers, heartbeats) wait in the server's send buffer; past the connection's
 * budget the connection is closed with 1008 instead of buffering more. The close frame queues
 * behind what is already buffered, and ws cuts the connection 30 s later if the client never
 * answers it, so one connection holds at most its budget plus one message.
 *
 * Protocol-level pings are answered by ws itself, which cuts a connection (1006, no close frame)
 * once 60 of its pongs wait unsent (its `maxPendingAutoPongs`).
 */
import type { WebSocket } from 'ws';

/** Policy violation: the client did not read what it was sent. */
export const SLOW_CONSUMER_CLOSE_CODE = 1008;
export const SLOW_CONSUMER_CLOSE_REASON = 'send buffer full: read your messages';

/** True when `socket` may take `bytes` more without going over `maxBufferedBytes`. */
export function hasSendRoom(socket: WebSocket, bytes: number, maxBufferedBytes: number): boolean {
  return socket.bufferedAmount + bytes <= maxBufferedBytes;
}

export function closeSlowConsumer(socket: WebSocket): void {
  socket.close(SLOW_CONSUMER_CLOSE_CODE, SLOW_CONSUMER_CLOSE_REASON);
}
