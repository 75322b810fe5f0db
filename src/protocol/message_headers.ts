// Record headers with a meaning to the broker, set by any producer (the SDK, a Kafka client, the
// AMQP front end for `expiration` and `x-delay`): a delivery time, a delay, a time to live.
export const DELIVER_AT_HEADER = 'sluice-deliver-at';
export const DELAY_MS_HEADER = 'sluice-delay-ms';
export const TTL_MS_HEADER = 'sluice-ttl-ms';
