// The security settings of `sluice start`: TLS on the listeners and between brokers, and the SASL
// users. A part of the settings table (settings.ts), kept apart to keep each file small.
import { CLI, choice, text, type SettingSpec } from './setting_spec.ts';

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
];
