// The security settings of `sluice start`: TLS on the listeners and between brokers, the SASL
// users and authorization. A part of the settings table (settings.ts), kept apart to keep each file small.
import { CLI, choice, integer, text, type SettingSpec } from './setting_spec.ts';
import type { TextFormat } from './setting_values.ts';

/** Principals, comma-separated: `User:alice,User:CN=ops,O=Acme` is two (a comma inside a name follows `=`). */
const PRINCIPALS: TextFormat = {
  shape: 'TYPE:NAME principals, comma-separated',
  pattern: false,
  test: (t) => principals_of(t).every((p) => /^[A-Za-z]+:.+$/.test(p)),
};

/** The principals of a comma-separated list: a part that is not TYPE:NAME belongs to the one before. */
export function principals_of(text: string): string[] {
  const principals: string[] = [];
  for (const part of text.split(',')) {
    if (/^\s*[A-Za-z]+:/.test(part) || principals.length === 0) principals.push(part.trim());
    else principals[principals.length - 1] += `,${part}`;
  }
  return principals.filter((p) => p !== '');
}

export const SECURITY_SETTINGS: SettingSpec[] = [
  {
    key: 'tls_cert',
    type: text(),
    default: null,
    none: 'no TLS',
    on: CLI,
    placeholder: '<file>',
    option: 'tls.cert_file',
    description:
      "the broker's certificate chain (PEM); with tls_key, every listener (Kafka, AMQP, HTTP) takes TLS 1.2+ only, " +
      'and brokers connect to one another over TLS',
  },
  {
    key: 'tls_key',
    type: text(),
    default: null,
    none: 'no TLS',
    on: CLI,
    placeholder: '<file>',
    option: 'tls.key_file',
    description: "the certificate's private key (PEM); both files are read again when they change",
  },
  {
    key: 'dev_tls',
    type: { kind: 'boolean' },
    default: false,
    on: CLI,
    option: null,
    description:
      'TLS with a local CA and certificates made in <data>/dev-tls (clients trust its ca.pem), for trying TLS out',
  },
  {
    key: 'tls_ca',
    type: text(),
    default: null,
    none: "the system's certificate authorities",
    on: CLI,
    placeholder: '<file>',
    option: 'tls.ca_file',
    description:
      "certificate authorities (PEM) trusted for client certificates and for the other brokers' certificates",
  },
  {
    key: 'tls_client_auth',
    type: choice('none', 'requested', 'required'),
    default: 'none',
    on: CLI,
    placeholder: '<mode>',
    option: 'tls.client_auth',
    description:
      'client certificates (mTLS, needs tls_ca): not asked for, checked when given, or required; ' +
      "a certificate's subject is the client's principal",
  },
  {
    key: 'sasl_users',
    type: text(),
    default: null,
    none: 'no login required',
    on: CLI,
    placeholder: '<file>',
    option: 'credentials',
    description:
      'require SASL PLAIN/SCRAM (and AMQP) logins: JSON {"users": {name: password}, "vhosts"?: {vhost: [name|"*"]}}',
  },
  {
    key: 'sasl',
    type: { kind: 'boolean' },
    default: false,
    on: CLI,
    option: 'sasl',
    description:
      'require logins (Kafka SASL, AMQP, HTTP Basic) even without sasl_users: the users are then those of sluice user',
  },
  {
    key: 'authorization',
    type: { kind: 'boolean' },
    default: false,
    on: CLI,
    option: 'acls.enabled',
    description: 'check every request against the ACLs (Kafka CreateAcls, sluice acl): one no ACL allows is refused',
  },
  {
    key: 'super_users',
    type: text(PRINCIPALS),
    default: null,
    none: 'none',
    on: CLI,
    placeholder: '<principals>',
    option: 'acls.super_users',
    description:
      'principals allowed everything, comma-separated: User:admin,User:CN=ops (the inter-broker user is one)',
  },
  {
    key: 'connections_per_ip_max',
    type: integer(0, 1_000_000),
    default: 0,
    on: CLI,
    placeholder: '<n>',
    option: 'client_limits.per_ip_max',
    description: 'Kafka and AMQP connections one client address may hold open at once (0: no limit)',
  },
  {
    key: 'connections_per_user_max',
    type: integer(0, 1_000_000),
    default: 0,
    on: CLI,
    placeholder: '<n>',
    option: 'client_limits.per_user_max',
    description:
      'Kafka and AMQP connections one user may hold open at once; one more is refused at login (0: no limit)',
  },
];
