// The values of the broker's settings: their types, how a value is read from text (a flag, an
// environment variable, a Kafka group config) or from the JSON config file, how a refusal is
// worded, and how types and values are written in messages and the docs. The table of settings
// itself is settings.ts.

/** A setting's value once read: a number, a text, a flag, or a list of milliseconds. */
export type SettingValue = string | number | boolean | readonly number[];

/** The shape a text value must have. */
export interface TextFormat {
  /** How messages and the docs name a valid value: `HOST:PORT`, or a noun phrase (`a user name`). */
  readonly shape: string;
  /** True when `shape` is a pattern: a refusal then says "expected HOST:PORT". */
  readonly pattern: boolean;
  test(text: string): boolean;
}

export type SettingType =
  /** A whole number from `min` to `max` (to the largest safe integer without one). */
  | { readonly kind: 'integer'; readonly min: number; readonly max?: number; readonly unit?: 'ms' }
  /** Milliseconds, one per retry: a JSON list, or comma-separated text. */
  | { readonly kind: 'ms_list' }
  | { readonly kind: 'choice'; readonly values: readonly string[] }
  /** On or off. As text, only `false` turns it off (as SLUICE_AUTO_CREATE has always read). */
  | { readonly kind: 'boolean' }
  /** Any text, or text of the given format. */
  | { readonly kind: 'text'; readonly format?: TextFormat };

/** Where a value comes from: text (flags, environment, Kafka group configs) or the JSON config file. */
export type ValueForm = 'text' | 'json';

const DIGITS = /^\d+$/;

function integer_of(type: Extract<SettingType, { kind: 'integer' }>, n: number): number | undefined {
  const max = type.max ?? Number.MAX_SAFE_INTEGER;
  return Number.isSafeInteger(n) && n >= type.min && n <= max ? n : undefined;
}

/** The value `text` stands for, or undefined when the type refuses it. */
export function read_text(type: SettingType, text: string): SettingValue | undefined {
  switch (type.kind) {
    case 'integer': {
      const trimmed = text.trim();
      return DIGITS.test(trimmed) ? integer_of(type, Number(trimmed)) : undefined;
    }
    case 'ms_list': {
      if (text.trim() === '') return [];
      const parts = text.split(',').map((part) => part.trim());
      if (!parts.every((part) => DIGITS.test(part))) return undefined;
      const values = parts.map(Number);
      return values.every((n) => Number.isSafeInteger(n)) ? values : undefined;
    }
    case 'choice':
      return type.values.includes(text) ? text : undefined;
    case 'boolean':
      return text !== 'false';
    case 'text':
      return type.format === undefined || type.format.test(text) ? text : undefined;
  }
}

/** The value a JSON value of the config file stands for (its JSON type, or the text form as a string). */
export function read_json(type: SettingType, value: unknown): SettingValue | undefined {
  if (typeof value === 'string') {
    // The text form of a boolean is lenient; in a file, only the words themselves.
    if (type.kind === 'boolean') return value === 'true' ? true : value === 'false' ? false : undefined;
    return read_text(type, value);
  }
  switch (type.kind) {
    case 'integer':
      return typeof value === 'number' ? integer_of(type, value) : undefined;
    case 'ms_list':
      return Array.isArray(value) && value.every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0)
        ? [...(value as number[])]
        : undefined;
    case 'boolean':
      return typeof value === 'boolean' ? value : undefined;
    default:
      return undefined;
  }
}

function or_list(words: readonly string[]): string {
  return words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

/** What a valid value is, as a noun phrase or (for a text format that is a pattern) the pattern. */
export function expectation(type: SettingType, form: ValueForm): string {
  switch (type.kind) {
    case 'integer':
      if (type.max !== undefined) return `an integer from ${type.min} to ${type.max}`;
      return `a whole number${type.unit === 'ms' ? ' of milliseconds' : ''} >= ${type.min}`;
    case 'ms_list':
      return form === 'json'
        ? 'a list of non-negative integers (milliseconds)'
        : 'a comma-separated list of milliseconds, e.g. 1000,5000,30000';
    case 'choice':
      return or_list(form === 'json' ? type.values.map((v) => JSON.stringify(v)) : type.values);
    case 'boolean':
      return 'true or false';
    case 'text':
      return type.format?.shape ?? 'a string';
  }
}

/**
 * The refusal of a flag, environment variable or config file value: `--kafka: expected HOST:PORT,
 * got "x"`, `config shareGroups.deliveryCountLimit: an integer from 1 to 1000, got 0`.
 */
export function refusal(where: string, type: SettingType, value: unknown, form: ValueForm): string {
  const pattern = type.kind === 'text' && type.format?.pattern === true;
  const shown = JSON.stringify(value) ?? String(value);
  return `${where}: ${pattern ? 'expected ' : ''}${expectation(type, form)}, got ${shown}`;
}

/** The refusal of a Kafka group config value: `share.delivery.count.limit=0: must be an integer from 1 to 1000`. */
export function kafka_refusal(name: string, type: SettingType, value: string): string {
  return `${name}=${value}: must be ${expectation(type, 'text')}`;
}

/** A value as text: what a flag or Kafka group config would hold (lists comma-separated). */
export function text_of(value: SettingValue): string {
  return Array.isArray(value) ? value.join(',') : String(value);
}

/** A type as the docs write it: `integer 100–3600000 (ms)`, `earliest | latest`, `HOST:PORT`. */
export function type_text(type: SettingType): string {
  switch (type.kind) {
    case 'integer': {
      const range = type.max !== undefined ? `${type.min}–${type.max}` : `≥ ${type.min}`;
      return `integer ${range}${type.unit === 'ms' ? ' (ms)' : ''}`;
    }
    case 'ms_list':
      return 'list of ms';
    case 'choice':
      return type.values.join(' | ');
    case 'boolean':
      return 'true / false';
    case 'text':
      return type.format?.shape ?? 'text';
  }
}
