// The AMQP targets: Sluice's AMQP listener against RabbitMQ quorum queues, both driven by the same
// amqplib code (peers/rabbitmq.ts's run) in the same report.
import { QUEUE_CONSUMERS } from './profiles.ts';
import type { TargetCheck, WorkloadResult } from './report.ts';
import { SLUICE_AMQP } from './sluice/amqp.ts';

const PEER = 'rabbitmq-quorum';

/** The lookup targets.ts's results give: one system's single-partition result of a workload. */
interface Results {
  find(system: string, workload: WorkloadResult['workload'], payload: number): WorkloadResult | undefined;
}
const rate = (msgs_per_s: number) => Math.round(msgs_per_s).toLocaleString('en-US');

/** Ours against the peer's rate for one workload: at least `factor` times. */
function rate_check(results: Results, workload: WorkloadResult['workload'], factor: number, what: string): TargetCheck {
  const ours = results.find(SLUICE_AMQP, workload, 100);
  const peer = results.find(PEER, workload, 100);
  const truncated = [ours, peer].filter((r) => r?.truncated).map((r) => r!.label);
  return {
    target: `AMQP ${what}, 100 B, amqplib: at least ${factor}x RabbitMQ quorum queues`,
    measured:
      ours && peer
        ? `${rate(ours.msgs_per_s)} msg/s = ${(ours.msgs_per_s / peer.msgs_per_s).toFixed(2)}x ` +
          `${peer.label} (${rate(peer.msgs_per_s)} msg/s)`
        : 'n/a',
    met: ours && peer ? ours.msgs_per_s >= factor * peer.msgs_per_s : null,
    note: truncated.length > 0 ? `reached the time limit: ${truncated.join(', ')}` : '',
  };
}

function latency_check(results: Results): TargetCheck {
  const ours = results.find(SLUICE_AMQP, 'latency', 100)?.latency;
  const peer = results.find(PEER, 'latency', 100)?.latency;
  return {
    target: "AMQP publish-to-deliver p99 at 5,000 msg/s with confirms and fsync: at most RabbitMQ quorum's",
    measured: ours && peer ? `p99 ${ours.p99_ms.toFixed(2)} ms (RabbitMQ quorum ${peer.p99_ms.toFixed(2)} ms)` : 'n/a',
    met: ours && peer ? ours.p99_ms <= peer.p99_ms : null,
    note: '',
  };
}

export function amqp_checks(results: Results): TargetCheck[] {
  return [
    rate_check(results, 'publish', 3, 'confirmed persistent publish'),
    rate_check(results, 'queue', 2, `delivery with manual acks, ${QUEUE_CONSUMERS} consumers, prefetch 500`),
    latency_check(results),
  ];
}
