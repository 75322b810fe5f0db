// `npm run screenshots`: starts a broker on a temporary data directory, gives it some traffic (a few
// topics, consumer groups that fall behind and catch up, a queue with dead letters), opens the
// console in headless Chromium and writes docs/console-*.png. Stops by itself in about a minute.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import type { Page } from 'playwright-core';
import { start_broker } from '../src/compose/start_broker.ts';
import { console_handler } from '../src/server/http/console_static.ts';
import { Sluice } from '../src/sdk/index.ts';
import {
  launch_console_browser,
  why_no_chromium,
  why_no_console_build,
  type ConsoleBrowser,
} from '../test/support/console_browser.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const DOCS = path.resolve(import.meta.dirname, '..', 'docs');
const VIEWPORT = { width: 1280, height: 820 };
/** Long enough for the live charts to fill a good part of their width. */
const CHART_FILL_MS = 40_000;
/** The demo producer's rhythm: a batch every tick, its size rising and falling over a period. */
const PRODUCE_TICK_MS = 200;
const PRODUCE_WAVE_MS = 15_000;
/** The billing consumer stops for a while every cycle, so its lag climbs and falls back. */
const BILLING_PAUSE_MS = 6_000;
const BILLING_RUN_MS = 5_000;

const CUSTOMERS = ['ada', 'grace', 'linus', 'barbara', 'ken', 'margaret', 'dennis', 'radia'];
const ITEMS = ['keyboard', 'monitor', 'desk lamp', 'notebook', 'headphones', 'webcam'];

function order(i: number) {
  const customer = CUSTOMERS[i % CUSTOMERS.length]!;
  return {
    key: customer,
    value: JSON.stringify({
      order_id: 10_000 + i,
      customer,
      item: ITEMS[(i * 7) % ITEMS.length],
      quantity: 1 + (i % 3),
      total_cents: 1_999 + ((i * 733) % 20_000),
    }),
    headers: { 'content-type': 'application/json', source: i % 4 === 0 ? 'mobile' : 'web' },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function create_topics(kafka: Kafka): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic: 'orders', numPartitions: 3 },
      { topic: 'payments', numPartitions: 2 },
      { topic: 'emails', numPartitions: 1 },
      { topic: 'audit.events', numPartitions: 1, configEntries: [{ name: 'retention.ms', value: '604800000' }] },
    ],
    waitForLeaders: true,
  });
  await admin.disconnect();
}

/** The first orders, payments and audit events. */
async function send_history(producer: Producer): Promise<void> {
  await producer.send({ topic: 'orders', messages: Array.from({ length: 600 }, (_, i) => order(i)) });
  const payment = (i: number) => ({
    key: `pay-${i}`,
    value: JSON.stringify({ order_id: 10_000 + i, status: i % 9 === 0 ? 'declined' : 'captured' }),
  });
  await producer.send({ topic: 'payments', messages: Array.from({ length: 240 }, (_, i) => payment(i)) });
  const sign_in = (i: number) => ({ value: `user ${CUSTOMERS[i % CUSTOMERS.length]} signed in` });
  await producer.send({ topic: 'audit.events', messages: Array.from({ length: 80 }, (_, i) => sign_in(i)) });
}

/** Emails, and a queue whose handler gives up on some of them: they land in emails.mailers.dlq. */
async function start_mailers(producer: Producer, bootstrap: string) {
  const email = (i: number) => ({
    key: `user-${i}`,
    value: JSON.stringify({
      to: `${CUSTOMERS[i % CUSTOMERS.length]}@example.com`,
      template: i % 7 === 3 ? 'invoice' : 'welcome',
    }),
  });
  await producer.send({ topic: 'emails', messages: Array.from({ length: 40 }, (_, i) => email(i)) });
  const sluice = new Sluice({ brokers: [bootstrap], clientId: 'console-demo' });
  const queue = sluice.queueConsumer({ groupId: 'mailers', maxWaitTimeInMs: 200 });
  await queue.subscribe({ topics: ['emails'] });
  await queue.run({
    eachMessage: async ({ message, deliveryCount, reject }) => {
      const mail = JSON.parse(message.value!.toString()) as { template: string };
      if (mail.template === 'invoice') return reject('template "invoice" is missing its PDF attachment');
      // Some sends fail once and succeed when retried: the queue counts the redeliveries.
      if (deliveryCount === 1 && Number(message.key!.toString().slice('user-'.length)) % 5 === 0) {
        throw new Error('SMTP server timed out');
      }
    },
  });
  return queue;
}

/** The pages without live charts, each once its table is there. */
async function shoot_pages(chromium: ConsoleBrowser, base: string): Promise<void> {
  const page = await chromium.context.newPage();
  await visit(page, `${base}/#/topics`, '[data-testid="topics-table"]');
  await shoot(page, 'console-topics.png');
  await visit(page, `${base}/#/topics/orders?partition=0`, '[data-testid="messages-table"]');
  await shoot(page, 'console-topic.png');
  await visit(page, `${base}/#/groups`, '[data-testid="groups-table"]');
  await shoot(page, 'console-groups.png');
  await visit(page, `${base}/#/queues`, '[data-testid="queues-table"]');
  await shoot(page, 'console-queues.png');
  await visit(page, `${base}/#/queues/mailers`, '[data-testid="queue-settings-table"]');
  await shoot(page, 'console-queue.png');
  await visit(page, `${base}/#/dead-letters/emails.mailers.dlq`, '[data-testid="dlq-messages-table"]');
  await shoot(page, 'console-dead-letters.png');
}

async function main(): Promise<void> {
  const why_not = why_no_chromium() ?? why_no_console_build();
  if (why_not) throw new Error(why_not);
  const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-screenshots-'));
  const broker = await start_broker({
    data_dir,
    kafka: { host: '127.0.0.1', port: 0 },
    http: { host: '127.0.0.1', port: 0 },
    console_handler,
  });
  const bootstrap = `${broker.kafka_address.host}:${broker.kafka_address.port}`;
  const base = `http://${broker.http_address!.host}:${broker.http_address!.port}`;
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'console-demo', logLevel: logLevel.NOTHING });
  const stops: Array<() => Promise<void>> = [];
  let running = true;
  try {
    await create_topics(kafka);
    const producer = kafka.producer();
    await producer.connect();
    stops.push(() => producer.disconnect());
    await send_history(producer);

    // A group that stopped part-way (its lag stays), and one that keeps up.
    await consume_then_stop(kafka, 'analytics', 'orders', 350);
    const shipping = await follow(kafka, 'shipping', 'payments');
    stops.push(() => shipping.disconnect());

    const queue = await start_mailers(producer, bootstrap);
    stops.push(() => queue.disconnect());

    // Live traffic for the charts: orders in waves, billing pausing and catching up.
    const billing = await follow(kafka, 'billing', 'orders');
    stops.push(() => billing.disconnect());
    const traffic = produce_waves(producer, () => running);
    const pauses = pause_cycles(billing, () => running);

    const chromium = await launch_console_browser(VIEWPORT);
    stops.push(() => chromium.close());
    const overview = await chromium.context.newPage();
    const group = await chromium.context.newPage();
    await overview.goto(`${base}/#/`);
    await group.goto(`${base}/#/groups/billing`);
    await sleep(CHART_FILL_MS);
    await shoot(overview, 'console-overview.png');
    await shoot(group, 'console-group.png');
    running = false;
    await Promise.all([traffic, pauses]);

    await shoot_pages(chromium, base);
  } finally {
    running = false;
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await broker.close();
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
}

async function visit(page: Page, url: string, ready: string): Promise<void> {
  await page.goto(url);
  await page.waitForSelector(ready);
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.bringToFront();
  await page.screenshot({ path: path.join(DOCS, name) });
  console.log(`wrote docs/${name}`);
}

async function consume_then_stop(kafka: Kafka, group: string, topic: string, count: number): Promise<void> {
  const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let seen = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  await consumer.run({
    eachMessage: async () => {
      if (++seen >= count) done();
    },
  });
  await finished;
  await consumer.disconnect();
}

async function follow(kafka: Kafka, group: string, topic: string): Promise<Consumer> {
  const consumer = kafka.consumer({
    groupId: group,
    maxWaitTimeInMs: 100,
    sessionTimeout: 10_000,
    heartbeatInterval: 1_000,
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ autoCommitInterval: 500, eachMessage: async () => undefined });
  return consumer;
}

async function produce_waves(producer: Producer, running: () => boolean): Promise<void> {
  const started = Date.now();
  let i = 1_000;
  while (running()) {
    const phase = ((Date.now() - started) % PRODUCE_WAVE_MS) / PRODUCE_WAVE_MS;
    const size = Math.round(12 + 10 * Math.sin(phase * 2 * Math.PI));
    await producer.send({ topic: 'orders', messages: Array.from({ length: size }, () => order(i++)) });
    await sleep(PRODUCE_TICK_MS);
  }
}

async function pause_cycles(consumer: Consumer, running: () => boolean): Promise<void> {
  while (running()) {
    await sleep(BILLING_RUN_MS);
    consumer.pause([{ topic: 'orders' }]);
    await sleep(BILLING_PAUSE_MS);
    consumer.resume([{ topic: 'orders' }]);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
