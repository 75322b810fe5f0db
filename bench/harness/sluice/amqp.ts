// Sluice over AMQP 0-9-1: its own broker process (fsync), driven by amqplib through the very run
// that drives RabbitMQ (peers/rabbitmq.ts): persistent messages with publisher confirms to durable
// queues declared over AMQP, consumers with prefetch and manual acks. So the AMQP targets compare
// the same client code against both brokers.
import type { QueueParams, SystemUnderTest, ThroughputResult } from '../types.ts';
import { next_run_name } from '../peers/adapter.ts';
import { package_label } from '../peers/install.ts';
import { RabbitRun } from '../peers/rabbitmq.ts';
import { PeerWorkloads, run_queue } from '../peers/workloads.ts';
import { BrokerProcess } from './broker.ts';
import { DURABILITY, type SluiceSystemsOptions } from './system.ts';

export const SLUICE_AMQP = 'sluice-amqp-fsync';

export class SluiceAmqpSystem extends PeerWorkloads implements SystemUnderTest {
  readonly id = SLUICE_AMQP;
  readonly label = 'Sluice over AMQP (amqplib)';
  readonly durability = DURABILITY.fsync.class;
  readonly durability_detail = `publisher confirm after the queue's log is fsynced; ${DURABILITY.fsync.detail}`;
  readonly client = package_label('amqplib');
  private broker: BrokerProcess | null = null;

  constructor(private readonly options: SluiceSystemsOptions) {
    super();
  }

  async start(workdir: string): Promise<void> {
    if (this.broker) throw new Error(`${this.id} is already started`);
    this.broker = await BrokerProcess.start(workdir, this.id, {
      durability: DURABILITY.fsync.flag,
      node_args: this.options.broker_node_args,
      amqp: true,
    });
  }

  async stop(): Promise<void> {
    const broker = this.broker;
    this.broker = null;
    await broker?.stop();
  }

  server_pids(): number[] {
    return this.broker ? [this.broker.pid] : [];
  }

  protected new_run(partitions: number): RabbitRun {
    if (!this.broker) throw new Error(`${this.id} is not started`);
    return new RabbitRun(`amqp://guest:guest@127.0.0.1:${this.broker.amqp_port}`, next_run_name(), partitions, {});
  }

  queue(params: QueueParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    return run_queue((partitions) => this.new_run(partitions), params, progress);
  }
}
