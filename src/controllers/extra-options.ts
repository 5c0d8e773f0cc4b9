/**
 * Reading the controller-manager flags that reach controllers through
 * `ControllerOptions.extra` (keyed by flag name; durations in ms).
 */
import type { ControllerContext } from './types.js';

/** The numeric value of `--<flag>` when the controller manager passed one, else undefined. */
export function extraNumber(ctx: ControllerContext, flag: string): number | undefined {
  const v = ctx.options.extra?.[flag];
  return typeof v === 'number' ? v : undefined;
}
