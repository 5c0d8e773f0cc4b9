/**
 * Selector contract (implemented in api/labels.ts). Labels are a plain map.
 */
export type Labels = Readonly<Record<string, string>>;

export interface Selector {
  matches(labels: Labels | undefined): boolean;
  /** True when the selector selects everything. */
  empty(): boolean;
  /** The canonical string form, e.g. `app=web,tier in (a,b)`. */
  toString(): string;
}
