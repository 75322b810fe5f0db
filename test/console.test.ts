// The web console end to end: a broker in this process serving the built console on its HTTP
// listener, real clients (kafkajs, the SDK's queue consumer, amqplib) making the state, and headless
// Chromium reading and clicking the pages. What the page shows is checked against what the clients
// see: a topic they created, a group's lag from their own offsets, a redriven dead letter read back
// from its origin topic. Needs Chromium; skipped with the reason elsewhere, never under CI. (How
// the console's files are served is in console_files.test.ts.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel, type Admin, type Message } from 'kafkajs';
import amqp from 'amqplib';
import type { Page } from 'playwright-core';
import { start_broker, type RunningBroker } from '../src/compose/start_broker.ts';
import { console_handler } from '../src/server/http/console_static.ts';
import { Sluice } from '../src/sdk/index.ts';
import {
  launch_console_browser,
  why_no_chromium,
  why_no_console_build,
  type ConsoleBrowser,
} from './support/console_browser.ts';
import { until } from './support/until.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
/** How long a page may take to show what the test looks for (it polls the API each second). */
const PAGE_WAIT_MS = 15_000;

const why_not = why_no_chromium() ?? why_no_console_build();
if (why_not && process.env.CI === 'true') throw new Error(`console browser tests cannot run under CI: ${why_not}`);

// One broker, admin client and browser page for every test of this file, in order.
let data_dir: string;
let broker: RunningBroker;
let base: string;
let kafka: Kafka;
let admin: Admin;
let chromium: ConsoleBrowser;
let page: Page;
const page_errors: string[] = [];

before(async () => {
  if (why_not) return; // every test is skipped
  data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-console-'));
  broker = await start_broker({
    data_dir,
    kafka: { host: '127.0.0.1', port: 0 },
    http: { host: '127.0.0.1', port: 0 },
    amqp: { host: '127.0.0.1', port: 0 },
    console_handler,
  });
  base = `http://${broker.http_address!.host}:${broker.http_address!.port}`;
  kafka = new Kafka({
    brokers: [`${broker.kafka_address.host}:${broker.kafka_address.port}`],
    clientId: 'console-test',
    logLevel: logLevel.NOTHING,
    retry: { retries: 10, initialRetryTime: 100 },
  });
  admin = kafka.admin();
  await admin.connect();
  chromium = await launch_console_browser();
  page = await chromium.context.newPage();
  page.setDefaultTimeout(PAGE_WAIT_MS);
  page.on('pageerror', (error) => page_errors.push(error.message));
});

after(async () => {
  await chromium?.close();
  await admin?.disconnect();
  await broker?.close();
  if (data_dir) fs.rmSync(data_dir, { recursive: true, force: true });
});

/** Opens a console URL and waits until its page has rendered or failed. */
const open = async (url: string) => {
  await page.goto(`${base}/${url}`);
  const path = url.startsWith('#') ? url.slice(1).split('?')[0]! : `/${url}`;
  await page.waitForSelector(`[data-testid="page"][data-path="${path}"]:not([data-state="loading"])`);
};

/** Sends each batch of messages to `topic` in turn, with one producer. */
async function send(topic: string, ...batches: Message[][]): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  for (const messages of batches) await producer.send({ topic, messages });
  await producer.disconnect();
}

/** Consumes all `count` messages of `topic` in `group`, then commits `commits[p]` for each partition p. */
async function consume_then_commit(group: string, topic: string, count: number, commits: number[]): Promise<void> {
  const consumer = kafka.consumer({
    groupId: group,
    sessionTimeout: 10_000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 100,
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let received = 0;
  await consumer.run({ autoCommit: false, eachMessage: async () => void received++ });
  await until(async () => received === count, `${count} messages consumed`);
  await consumer.commitOffsets(commits.map((offset, partition) => ({ topic, partition, offset: String(offset) })));
  await consumer.disconnect();
}

describe('console in headless Chromium: topics and groups', { skip: why_not ?? false }, () => {
  test('lists a topic created with kafkajs, with its partitions, and browses its messages', async () => {
    await admin.createTopics({ topics: [{ topic: 'console-orders', numPartitions: 2 }], waitForLeaders: true });
    await send('console-orders', [
      { key: 'customer-7', value: 'order #1', partition: 0, headers: { source: 'web' } },
      { key: 'customer-8', value: 'order #2', partition: 0 },
    ]);

    await open('#/topics');
    const row = page.locator('[data-testid="topic-row"][data-topic="console-orders"]');
    await row.waitFor();
    assert.match(await row.innerText(), /console-orders\s+2\s+2/);

    await row.locator('a').first().click();
    await page.waitForSelector('[data-testid="partitions-table"]');
    assert.equal(await page.locator('[data-testid="page-title"]').innerText(), 'console-orders');
    assert.equal(await page.locator('[data-testid="partition-row"]').count(), 2);
    const messages = page.locator('[data-testid="message-row"]');
    await messages.first().waitFor();
    assert.equal(await messages.count(), 2);
    assert.equal(await messages.nth(0).locator('[data-testid="message-value"]').innerText(), 'order #1');
    assert.equal(await messages.nth(0).locator('[data-testid="message-key"]').innerText(), 'customer-7');
    assert.match(await messages.nth(0).innerText(), /source:\s*web/);
  });

  test("shows a consumer group's lag equal to its real lag (end offsets minus committed offsets)", async () => {
    const topic = 'console-lag';
    const group = 'console-billing';
    const per_partition = 10;
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
    const batch = (partition: number) =>
      Array.from({ length: per_partition }, (_, i) => ({ value: `p${partition}-${i}`, partition }));
    await send(topic, batch(0), batch(1), batch(2));
    const produced = 3 * per_partition;

    // Consume everything, then commit a different amount per partition: all of 0, half of 1, none of 2.
    const commits = [per_partition, per_partition / 2, 0];
    await consume_then_commit(group, topic, produced, commits);
    const committed = commits.reduce((a, b) => a + b, 0);

    // The same figure from kafkajs's own view of the group.
    const [fetched] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    const ends = await admin.fetchTopicOffsets(topic);
    const end_of = (partition: number) => Number(ends.find((e) => e.partition === partition)!.high);
    const lag_by_partition = new Map(
      fetched!.partitions.map((p) => [p.partition, end_of(p.partition) - Number(p.offset)]),
    );
    const kafkajs_lag = [...lag_by_partition.values()].reduce((a, b) => a + b, 0);
    assert.equal(kafkajs_lag, produced - committed);

    await open('#/groups');
    const row = page.locator(`[data-testid="group-row"][data-group="${group}"]`);
    await row.waitFor();
    assert.equal(await row.locator('[data-testid="group-lag"]').innerText(), String(produced - committed));

    await row.locator('a').first().click();
    await page.waitForSelector('[data-testid="offsets-table"]');
    assert.equal(await page.locator('[data-testid="group-total-lag"]').innerText(), String(kafkajs_lag));
    for (const [partition, lag] of lag_by_partition) {
      const offset_row = page.locator(
        `[data-testid="offset-row"][data-topic="${topic}"][data-partition="${partition}"]`,
      );
      assert.equal(
        await offset_row.locator('[data-testid="lag"]').innerText(),
        String(lag),
        `lag of partition ${partition}`,
      );
      assert.equal(await offset_row.locator('[data-testid="committed"]').innerText(), String(commits[partition]));
    }
    // The lag chart draws once it has a sample.
    await page.locator('[data-testid="lag-chart"] canvas').waitFor();
  });
});

/**
 * Runs a queue consumer of `group` on `topic` that rejects the message 'poison' until it has handled
 * three messages; returns the dead-letter topic that then holds the one rejected message.
 */
async function dead_letter_poison(topic: string, group: string): Promise<string> {
  const bootstrap = `${broker.kafka_address.host}:${broker.kafka_address.port}`;
  const sluice = new Sluice({ brokers: [bootstrap], clientId: 'console-test' });
  const queue = sluice.queueConsumer({ groupId: group, maxWaitTimeInMs: 100 });
  let handled = 0;
  await queue.subscribe({ topics: [topic] });
  await queue.run({
    eachMessage: async ({ message, reject }) => {
      handled++;
      if (message.value!.toString() === 'poison') reject('card declined');
    },
  });
  await until(async () => handled >= 3, 'the queue consumer handling all three messages');
  const dlq = await until(async () => {
    const response = await fetch(`${base}/api/v1/dead-letters`);
    const body = (await response.json()) as { items: Array<{ topic: string; origin_topic: string; messages: number }> };
    return body.items?.find((d) => d.origin_topic === topic && d.messages === 1)?.topic;
  }, 'the dead letter');
  await queue.disconnect();
  return dlq;
}

describe('console in headless Chromium: AMQP queues', { skip: why_not ?? false }, () => {
  test('lists an AMQP queue declared with amqplib, with its depth, topic and bindings', async () => {
    const connection = await amqp.connect(`amqp://guest:guest@127.0.0.1:${broker.amqp_address!.port}`);
    const channel = await connection.createConfirmChannel();
    await channel.assertExchange('console-events', 'topic');
    await channel.assertQueue('console-audit', { durable: true });
    await channel.bindQueue('console-audit', 'console-events', 'audit.#');
    for (let i = 0; i < 3; i++) channel.publish('console-events', 'audit.login', Buffer.from(`event ${i}`));
    await channel.waitForConfirms();
    await connection.close();

    await open('#/queues');
    const row = page.locator('[data-testid="amqp-queue-row"][data-queue="console-audit"]');
    await row.waitFor();
    assert.equal(await row.locator('[data-testid="amqp-ready"]').innerText(), '3');
    assert.match(await row.locator('[data-testid="amqp-bindings"]').innerText(), /console-events → audit\.#/);
    await row.locator('a').first().click();
    await page.waitForSelector('[data-testid="partitions-table"]');
    assert.equal(await page.locator('[data-testid="page-title"]').innerText(), 'console-audit', 'its topic');
  });
});

describe('console in headless Chromium: dead letters', { skip: why_not ?? false }, () => {
  test('redrives a dead-lettered message from the console back to its origin topic', async () => {
    const topic = 'console-payments';
    const group = 'console-payers';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await send(topic, [{ value: 'payment-0' }, { value: 'poison' }, { value: 'payment-2' }]);
    const dlq = await dead_letter_poison(topic, group);

    await open('#/dead-letters');
    const dlq_row = page.locator(`[data-testid="dlq-row"][data-topic="${dlq}"]`);
    await dlq_row.waitFor();
    await dlq_row.locator('a').first().click();
    const letter = page.locator('[data-testid="dlq-message"]');
    await letter.first().waitFor();
    assert.equal(await letter.count(), 1);
    assert.equal(await letter.locator('[data-testid="dlq-value"]').innerText(), 'poison');
    assert.match(await letter.innerText(), /card declined/);
    await letter.locator('[data-testid="redrive"]').click();
    await page.waitForFunction(() =>
      /Redrove 1 message/.test(document.querySelector('[data-testid="redrive-result"]')?.textContent ?? ''),
    );

    // Back in the origin topic, after the three originals, read by kafkajs.
    const ends = await until(async () => {
      const offsets = await admin.fetchTopicOffsets(topic);
      return Number(offsets[0]!.high) === 4 ? offsets : null;
    }, 'the redriven message in the origin topic');
    assert.equal(Number(ends[0]!.high), 4);
    const reader = kafka.consumer({ groupId: 'console-verify', maxWaitTimeInMs: 100 });
    await reader.connect();
    await reader.subscribe({ topic, fromBeginning: true });
    const values: Array<{ offset: number; value: string }> = [];
    await reader.run({
      eachMessage: async ({ message }) =>
        void values.push({ offset: Number(message.offset), value: message.value!.toString() }),
    });
    await until(async () => values.length >= 4, 'four messages read back');
    await reader.disconnect();
    assert.deepEqual(
      values.map((v) => v.value),
      ['payment-0', 'poison', 'payment-2', 'poison'],
    );
  });
});

describe('console in headless Chromium: overview and errors', { skip: why_not ?? false }, () => {
  test('shows live throughput on the overview', async () => {
    await open('#/');
    assert.match(await page.locator('[data-testid="count-topics"]').innerText(), /^\d+$/);
    const producer = kafka.producer();
    await producer.connect();
    const sending = (async () => {
      for (let i = 0; i < 30; i++) {
        const messages = Array.from({ length: 20 }, (_, j) => ({ value: `tick-${i}-${j}` }));
        await producer.send({ topic: 'console-orders', messages });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    await page.waitForFunction(
      () => Number(document.querySelector('[data-testid="rate-in"]')?.textContent?.replace(/,/g, '')) > 0,
    );
    await sending;
    await producer.disconnect();
    await page.locator('[data-testid="throughput-chart"] canvas').waitFor();
  });

  test('an unknown page, an unknown topic and a failing API each show an error, never a blank page', async () => {
    await open('#/no-such-page');
    assert.match(await page.locator('[data-testid="error"]').innerText(), /No such page/);

    await open('some/deep/link');
    assert.match(await page.locator('[data-testid="error"]').innerText(), /nothing lives at \/some\/deep\/link/);

    await open('#/topics/no-such-topic');
    const unknown = await page.locator('[data-testid="error"]').innerText();
    assert.match(unknown, /404/);
    assert.match(unknown, /no-such-topic/);

    const groups_api = /\/api\/v1\/groups(\?|$)/;
    const on_fire = JSON.stringify({ error: { code: 'internal', message: 'the coordinator is on fire' } });
    await page.route(groups_api, (route) =>
      route.fulfill({ status: 500, contentType: 'application/json', body: on_fire }),
    );
    await open('#/groups');
    assert.match(await page.locator('[data-testid="error"]').innerText(), /the coordinator is on fire.*500 internal/s);
    await page.unroute(groups_api);

    const queues_api = /\/api\/v1\/queues(\?|$)/;
    await page.route(queues_api, (route) => route.abort('connectionrefused'));
    await open('#/queues');
    assert.match(await page.locator('[data-testid="error"]').innerText(), /did not answer/);
    await page.unroute(queues_api);

    assert.deepEqual(page_errors, [], 'no uncaught errors in the page');
  });
});
