// What one entry of the settings table says (settings.ts reads it and derives each surface's name),
// and the shorthands the tables are written with.
import type { SettingType, SettingValue, TextFormat } from './setting_values.ts';

/** An old spelling still accepted on one surface. */
export interface SettingAlias {
  readonly surface: 'file' | 'env' | 'flag';
  /** The whole name on that surface: `delayed.maxDelayMs`. */
  readonly name: string;
  /** Why it exists (shown in docs/settings.md). */
  readonly note: string;
}

export interface SettingSpec {
  /** snake_case; the canonical name within its group. */
  readonly key: string;
  readonly type: SettingType;
  /** null: none (`none` says what that means). */
  readonly default: SettingValue | null;
  readonly none?: string;
  /** One line, for docs/settings.md and `sluice start --help`. */
  readonly description: string;
  /** The surfaces that have the setting besides Kafka (whose name is `kafka`). */
  readonly on: readonly ('file' | 'env' | 'flag' | 'http')[];
  /** Its Kafka group config, for share-group settings a group can set for itself. */
  readonly kafka?: string;
  readonly aliases?: readonly SettingAlias[];
  /**
   * The option of an embedded broker (StartOptions of startBroker) for it, when that is not the
   * canonical name; null when an embedded broker has none.
   */
  readonly option?: string | null;
  /** What `--help` shows for the flag's value: `<dir>`. */
  readonly placeholder?: string;
}

/** The surfaces of a `sluice start` setting: the config file, the environment and a flag. */
export const CLI = ['file', 'env', 'flag'] as const;

export const text = (format?: TextFormat): SettingType => ({ kind: 'text', format });
export const integer = (min: number, max?: number): SettingType => ({ kind: 'integer', min, max });
export const ms = (min: number, max?: number): SettingType => ({ kind: 'integer', min, max, unit: 'ms' });
export const choice = (...values: string[]): SettingType => ({ kind: 'choice', values });
