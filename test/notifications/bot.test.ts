/**
 * Notifications from a running bot: the market maker trades on the embedded emulator, a
 * webhook receiver on loopback (its URL holding a secret path, as Slack's do) gets the fills
 * and the halt from the dashboard; no body carries the URL's secret, the dashboard token or
 * the key's id, and no log line the first two.
 */
import { rmSync } from 'node:fs';
import { request } from 'undici';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  LineCollector,
  marketMakerBot,
  startBot,
  temporaryDirectory,
} from '../dashboard/helpers.ts';
import { type Receiver, startReceiver, until } from './receiver.ts';

const directory = temporaryDirectory();
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const SECRET_PATH = '/services/T000/B000/XsecretXwebhookXpathX';

interface Message {
  events: { kind: string; title: string }[];
}

function kinds(receiver: Receiver): string[] {
  return receiver.bodies.flatMap((body) => (body as Message).events.map((event) => event.kind));
}

describe('a bot with a webhook', () => {
  it(
    'sends fills and the halt, batched, with no secret anywhere',
    { timeout: 40_000 },
    async () => {
      const receiver = await startReceiver(SECRET_PATH);
      onTestFinished(() => receiver.close());
      const lines = new LineCollector();
      const bot = await startBot(
        marketMakerBot(directory, {
          notifications: { webhooks: [{ url: receiver.url }], batch_ms: 200, max_per_minute: 60 },
        }),
        lines,
      );
      onTestFinished(async () => {
        await bot.stop('test cleanup');
      });
      const url = bot.httpUrl ?? '';

      await until('a fill notification', () => kinds(receiver).includes('fill'), 30_000);
      const page = await (await request(`${url}/`)).body.text();
      const token = /name="paperbot-token" content="([^"]+)"/.exec(page)?.[1] ?? '';
      const halted = await request(`${url}/dashboard/control/halt`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-paperbot-token': token },
        body: JSON.stringify({ confirm: 'halt' }),
      });
      expect(halted.statusCode).toBe(200);
      await halted.body.text();
      await until('the kill switch notification', () => kinds(receiver).includes('kill_switch'));

      // Batched: fewer messages than events once several fills came in.
      const events = kinds(receiver).length;
      expect(receiver.bodies.length).toBeLessThanOrEqual(events);
      const fillCount = kinds(receiver).filter((kind) => kind === 'fill').length;
      expect(fillCount).toBeGreaterThan(0);
      expect(fillCount).toBeLessThanOrEqual(bot.kernel?.status().counters.fills ?? 0);

      // The dashboard shows the webhook's counts, named by its host only.
      const snapshot = (await (await request(`${url}/dashboard/snapshot`)).body.json()) as {
        notifications: { webhook: string; sentEvents: number }[];
      };
      expect(snapshot.notifications[0]?.webhook).toMatch(/^webhook 1 \(127\.0\.0\.1:\d+\)$/);
      expect(snapshot.notifications[0]?.sentEvents).toBeGreaterThan(0);

      const bodies = JSON.stringify(receiver.bodies);
      const keyId = String(
        lines.records().find((record) => record.event === 'bot.started')?.key_id ?? 'no key id',
      );
      for (const secret of ['XsecretXwebhookXpathX', token, keyId]) {
        expect(bodies).not.toContain(secret);
      }
      // The start line names the key's id (an id, not a secret); never the URL or the token.
      for (const secret of ['XsecretXwebhookXpathX', token]) {
        expect(lines.text).not.toContain(secret);
      }
    },
  );
});
