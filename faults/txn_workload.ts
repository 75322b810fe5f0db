// The fault suite's transactions workload: consume-transform-produce. An idempotent producer writes
// inputs to their own topic; a loop (an SDK consumer group member and a kafkajs transactional producer)
// copies each batch of inputs to the output topic and commits the input offsets in the same
// transaction; a read_committed reader follows the output as it grows. A loop instance that
// fails is replaced by a new one under the same transactional id, which fences it. At the end the
// loop drains its input and a fresh read_committed reader reads the whole output; the checker
// holds them to exactly once (faults/checker/txn_properties.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Admin, Kafka, Producer } from 'kafkajs';
import type { Consumer, Sluice } from '../src/sdk/index.ts';
import type { HistoryOp, TxnInputOp, TxnOutputOp } from './checker/history.ts';
import { connect_idempotent, DRAIN_MAX_MS, DRAIN_STALL_MS, PARTITIONS, within } from './workload.ts';

export const TXN_INPUT_TOPIC = 'faults-txn-in';
export const TXN_OUTPUT_TOPIC = 'faults-txn-out';
const GROUP = 'faults-txn-loop';
const TRANSACTIONAL_ID = 'faults-txn-loop';
/** Inputs per send, and the pause between sends. */
const INPUT_BATCH = 5;
const PACE_MS = 100;
/** A failed loop instance is replaced after this pause. */
const RESTART_PAUSE_MS = 500;
/** The final reader stops once nothing more arrived for this long since its last record... */
const FINAL_IDLE_MS = 5_000;
/** ...or since it started, while it has read nothing. */
const FINAL_FIRST_MS = 30_000;
/**
 * A loop instance that has committed nothing for this long is replaced: a kafkajs 2.2.4 consumer
 * can stop fetching some partitions after faults for good (`.ci/run`'s schedule once), as an
 * application's liveness check would replace it.
 */
const STALL_RESTART_MS = 15_000;
/** A kafkajs client's disconnect is given this long (see `disconnect`). */
const DISCONNECT_WAIT_MS = 15_000;

/**
 * The consumers are the SDK's: a kafkajs 2.2.4 consumer under faults can stop fetching some
 * partitions for good, or spin without yielding and starve the harness (seed 2727; seed 101 for
 * the group workload). The producers are kafkajs's, the SDK having no transactions yet.
 */
export function txn_workload(
  kafka: Kafka,
  sdk: Sluice,
  started_ms: number,
  until: () => boolean,
  history: HistoryOp[],
) {
  const at = () => Date.now() - started_ms;
  let draining = true;
  const live = follow_output(sdk, 'faults-txn-live', (partition, offset, value) => {
    history.push({ kind: 'txn_output', reader: 'live', partition, offset, value, at_ms: at() });
  }).catch(() => null); // without it, the final reader still checks the output
  const looping = (async () => {
    while (draining) {
      const instance = await loop_instance(kafka, sdk).catch(() => null);
      if (instance) await instance.failed_or(() => !draining);
      await sleep(RESTART_PAUSE_MS);
    }
  })();
  const writing = write_inputs(kafka, at, until, history);

  return {
    writing,
    /**
     * Lets the loop copy what is left, then reads the whole output read_committed. Returns how many
     * input records the loop had not copied when it was stopped (the checker judges the output).
     */
    async drain(): Promise<number> {
      await writing;
      const missing = await drain_loop(kafka);
      draining = false;
      await looping;
      const reader = await live;
      if (reader) await disconnect(reader);
      for (const op of await read_output(sdk, at)) history.push(op);
      return missing;
    },
  };
}

/** Waits while the loop's committed input offsets move towards the input's end; what is left then. */
async function drain_loop(kafka: Kafka): Promise<number> {
  const admin = kafka.admin();
  await admin.connect().catch(() => undefined);
  try {
    const started_ms = Date.now();
    let progress_ms = started_ms;
    let left = Number.MAX_SAFE_INTEGER;
    while (Date.now() - progress_ms < DRAIN_STALL_MS && Date.now() - started_ms < DRAIN_MAX_MS) {
      const now_left = await uncopied(admin).catch(() => left);
      if (now_left < left) progress_ms = Date.now();
      left = now_left;
      if (left === 0) break;
      await sleep(500);
    }
    return left;
  } finally {
    await disconnect(admin);
  }
}

/** Input records the loop has yet to copy: the input's ends less its committed offsets. */
async function uncopied(admin: Admin): Promise<number> {
  const ends = await admin.fetchTopicOffsets(TXN_INPUT_TOPIC);
  const [committed] = await admin.fetchOffsets({ groupId: GROUP, topics: [TXN_INPUT_TOPIC] });
  let left = 0;
  for (const end of ends) {
    const offset = Number(committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? -1);
    left += Math.max(0, Number(end.high) - Math.max(0, offset));
  }
  return left;
}

async function write_inputs(kafka: Kafka, at: () => number, until: () => boolean, history: HistoryOp[]): Promise<void> {
  let producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    for (let n = 0; until(); n += INPUT_BATCH) {
      const ops: TxnInputOp[] = Array.from({ length: INPUT_BATCH }, (_, i) => ({
        kind: 'txn_input',
        value: `tin-${n + i}`,
        outcome: 'unknown',
        invoked_ms: at(),
      }));
      try {
        // One partition per send: kafkajs 2.2.4 partitions a send again when it retries, and drops
        // or doubles records when the send spanned brokers (docs/guarantees.md, What is not promised).
        const partition = (n / INPUT_BATCH) % PARTITIONS;
        const messages = ops.map((op) => ({ value: op.value, partition }));
        await within(producer.send({ topic: TXN_INPUT_TOPIC, acks: -1, messages }));
        for (const op of ops) op.outcome = 'ok';
      } catch {
        // Refused after retries or timed out: they may still be stored, and copied. A new producer
        // for what follows: kafkajs gives a failed send's sequence numbers to the next one, which a
        // broker that stored the failed send refuses for ever (produce_loop in workload.ts).
        await disconnect(producer);
        producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
        if (!(await connect_idempotent(producer, until))) break;
      } finally {
        history.push(...ops);
      }
      await sleep(PACE_MS);
    }
  } finally {
    await disconnect(producer);
  }
}

/**
 * One instance of the loop: its consumer hands each batch to a transaction that writes the batch's
 * values to the output and commits the input offsets with them. The first failure ends it (both
 * clients disconnected), as an application would restart.
 */
async function loop_instance(kafka: Kafka, sdk: Sluice) {
  const producer: Producer = kafka.producer({
    transactionalId: TRANSACTIONAL_ID,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  const consumer = sdk.consumer({ groupId: GROUP, sessionTimeout: 10_000, heartbeatInterval: 1000 });
  const state = { failed: false, committed_ms: Date.now() };
  const stop = async () => {
    await disconnect(consumer);
    await disconnect(producer);
  };
  consumer.on(consumer.events.CRASH, () => void (state.failed = true));
  try {
    await producer.connect();
    // kafkajs asks for the transactional producer id at the first transaction(), not at connect().
    // Asked here, before the consumer reads its committed offsets, the coordinator first ends what
    // the last instance left (a commit still writing its markers): otherwise the offsets read may
    // predate that commit and its inputs be copied twice (in .ci/run's schedule once).
    await (await producer.transaction()).abort();
    await consumer.connect();
    await consumer.subscribe({ topic: TXN_INPUT_TOPIC, fromBeginning: true });
    await run_loop(consumer, producer, state);
  } catch (error) {
    await stop(); // else it stays in the group, holding partitions, a member no one runs
    throw error;
  }
  return {
    async failed_or(stopping: () => boolean): Promise<void> {
      const stalled = () => Date.now() - state.committed_ms > STALL_RESTART_MS;
      while (!state.failed && !stopping() && !stalled()) await sleep(200);
      await stop();
    },
  };
}

/** Hands each batch to a transaction that copies it and commits the input offsets with it. */
function run_loop(
  consumer: Consumer,
  producer: Producer,
  state: { failed: boolean; committed_ms: number },
): Promise<void> {
  return consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      if (batch.messages.length === 0 || state.failed) return;
      const txn = await producer.transaction();
      try {
        // Into the input's partition: one partition per send, as for the inputs.
        const messages = batch.messages.map((m) => ({ value: m.value, partition: batch.partition }));
        await txn.send({ topic: TXN_OUTPUT_TOPIC, messages });
        const next = Number(batch.messages[batch.messages.length - 1]!.offset) + 1;
        await txn.sendOffsets({
          consumerGroupId: GROUP,
          topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: String(next) }] }],
        });
        await txn.commit();
        state.committed_ms = Date.now();
      } catch (error) {
        state.failed = true;
        await txn.abort().catch(() => undefined);
        throw error;
      }
    },
  });
}

/**
 * kafkajs 2.2.4's disconnect can wait for ever on a consumer caught between fetches and a
 * rebalance (seed 2727 waited past ten minutes at the end of its run): given a bound, after
 * which the client is left to its session timeout.
 */
async function disconnect(client: { disconnect(): Promise<void> }): Promise<void> {
  await Promise.race([client.disconnect().catch(() => undefined), sleep(DISCONNECT_WAIT_MS)]);
}

/** A read_committed consumer of the output from its start, calling `seen` for every record. */
async function follow_output(
  sdk: Sluice,
  group: string,
  seen: (partition: number, offset: number, value: string) => void,
): Promise<Consumer> {
  const consumer = sdk.consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 1000 });
  await consumer.connect();
  await consumer.subscribe({ topic: TXN_OUTPUT_TOPIC, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => seen(partition, Number(message.offset), message.value!.toString()),
  });
  return consumer;
}

/** The whole output, read read_committed by a new group until nothing more arrives. */
async function read_output(sdk: Sluice, at: () => number): Promise<TxnOutputOp[]> {
  // By offset: a record fetched again (a retried fetch) is one record, read once.
  const reads = new Map<string, TxnOutputOp>();
  const started = Date.now();
  let last_ms = 0;
  const reader = await follow_output(sdk, `faults-txn-final-${Date.now()}`, (partition, offset, value) => {
    reads.set(`${partition}:${offset}`, { kind: 'txn_output', reader: 'final', partition, offset, value, at_ms: at() });
    last_ms = Date.now();
  });
  const idle = () => (last_ms === 0 ? Date.now() - started > FINAL_FIRST_MS : Date.now() - last_ms > FINAL_IDLE_MS);
  while (!idle()) await sleep(500);
  await disconnect(reader);
  return [...reads.values()];
}
