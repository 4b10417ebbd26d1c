/**
 * When the venue applied the journal's cancels, from a recording of the same live session with
 * its private events (`paperbot record` with a key, or an emulator session with trading): the
 * `occurred_at` of each cancelled order's `CANCELLED` status event. With it a round trip splits
 * into its order and response legs as measured, not by assumption (`fit.ts`).
 */
import { openReplaySource } from '../backtest/sources.ts';

/** The venue's time (epoch ms) each of `orderIds` became CANCELLED, where the recording says. */
export async function cancelAppliedTimes(
  directory: string,
  orderIds: ReadonlySet<string>,
): Promise<Map<string, number>> {
  const applied = new Map<string, number>();
  // Read only: calibrating writes no cache beside the recording.
  const source = await openReplaySource([directory], { cache: 'off' });
  for await (const batch of source.batches()) {
    for (const record of batch) {
      if (record.k !== 'private' || record.d.type !== 'authoritative_status') continue;
      const data = record.d.data;
      if (data.to_state !== 'CANCELLED' || !orderIds.has(data.entity_id)) continue;
      if (applied.has(data.entity_id)) continue;
      const at = Date.parse(record.d.occurred_at);
      if (!Number.isNaN(at)) applied.set(data.entity_id, at);
    }
  }
  return applied;
}
