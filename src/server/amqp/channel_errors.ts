// Refusals of the broker core and of routing as AMQP channel exceptions, with RabbitMQ's reply
// codes and a text that says what to do.
import type { BrokerError, Core, RoutingError } from '../../core/index.ts';
import { AmqpError, ReplyCode } from '../../protocol/amqp/constants.ts';

/**
 * A refusal of the broker core as a channel exception. Queues are consumed on the broker that
 * coordinates share groups: elsewhere the client is told which one to connect to.
 */
export function broker_failure(core: Core, error: BrokerError, class_id: number, method_id: number): AmqpError {
  if (error.kind === 'not_coordinator' || error.kind === 'coordinator_not_available') {
    const node = core.cluster.coordinator_node('share');
    const where = node < 0 ? 'no broker coordinates share groups yet' : `connect to broker ${node} to consume`;
    return new AmqpError(
      ReplyCode.PRECONDITION_FAILED,
      `PRECONDITION_FAILED - ${error.message}; ${where}`,
      class_id,
      method_id,
    );
  }
  return new AmqpError(ReplyCode.PRECONDITION_FAILED, `PRECONDITION_FAILED - ${error.message}`, class_id, method_id);
}

export function routing_failure(error: RoutingError, class_id: number, method_id: number): AmqpError {
  const codes = {
    not_found: ReplyCode.NOT_FOUND,
    precondition_failed: ReplyCode.PRECONDITION_FAILED,
    access_refused: ReplyCode.ACCESS_REFUSED,
    resource_locked: ReplyCode.RESOURCE_LOCKED,
  } as const;
  return new AmqpError(codes[error.kind], `${error.kind.toUpperCase()} - ${error.message}`, class_id, method_id);
}
