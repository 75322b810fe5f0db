// AMQP under --authorization: RabbitMQ's configure, write and read permissions mapped onto the
// Kafka ACLs every front end shares, on the resources an AMQP object is stored as (a queue is its
// topic and its share group; exchanges are the cluster's routing):
//   configure  declaring a queue: CREATE on the cluster or its topic; deleting or purging it:
//              DELETE on its topic; binding it: ALTER on its topic; declaring, deleting or
//              binding an exchange: ALTER on the cluster
//   write      publishing: WRITE on the topic of every queue the message reaches
//   read       consuming or getting: READ on the queue's topic and on its share group;
//              a passive declare: DESCRIBE on its topic
// A refusal is ACCESS_REFUSED on the channel, as RabbitMQ answers a missing permission.
import {
  CLUSTER_RESOURCE,
  user_principal,
  type AclOperation,
  type AclResourceType,
  type Core,
} from '../../core/index.ts';
import { AmqpError, ReplyCode } from '../../protocol/amqp/constants.ts';

/** Who a channel acts for: its connection's user (guest included) and address. */
export interface AmqpActor {
  core: Core;
  username: string;
  client_host: string;
}

export function amqp_allowed(actor: AmqpActor, operation: AclOperation, type: AclResourceType, name: string): boolean {
  const { core } = actor;
  if (!core.acls.enabled) return true;
  const who = { principal: user_principal(actor.username || null), host: actor.client_host };
  return core.acls.authorize(who, operation, type, type === 'cluster' ? CLUSTER_RESOURCE : name);
}

/** Throws ACCESS_REFUSED on the method unless the ACLs allow it. */
export function require_amqp(
  actor: AmqpActor,
  operation: AclOperation,
  type: AclResourceType,
  name: string,
  method: readonly [class_id: number, method_id: number],
): void {
  if (amqp_allowed(actor, operation, type, name)) return;
  const what = type === 'cluster' ? 'the cluster' : `${type} ${name}`;
  const principal = user_principal(actor.username || null);
  throw new AmqpError(
    ReplyCode.ACCESS_REFUSED,
    `ACCESS_REFUSED - ${principal} may not ${operation} ${what}`,
    ...method,
  );
}

/** Reading a queue (consume, get): READ on its topic and on its share group. */
export function require_queue_read(
  actor: AmqpActor,
  queue: { topic: string; group_id: string },
  method_id: number,
): void {
  require_amqp(actor, 'read', 'topic', queue.topic, [60, method_id]);
  require_amqp(actor, 'read', 'group', queue.group_id, [60, method_id]);
}
