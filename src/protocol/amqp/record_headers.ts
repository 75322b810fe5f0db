// The record headers that keep an AMQP message in a topic: the exchange it was published to, and
// its content-header properties as received (flags and property list). Shared by the AMQP front
// end, which writes and delivers them, and the broker core, which rewrites them for dead letters.
export const HEADER_EXCHANGE = 'amqp.exchange';
export const HEADER_PROPERTIES = 'amqp.properties';
