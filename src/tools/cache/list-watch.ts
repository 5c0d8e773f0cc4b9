/**
 * ListWatch (client-go tools/cache/listwatch.go): a ListerWatcher over one
 * resource of the client, with fixed label and field selectors.
 */
import type { KubeList, KubeObject } from '../../api/types.js';
import type { ListOptions, ResourceInterface, Watch, WatchOptions } from '../../client/interfaces.js';
import type { ListerWatcher } from './interfaces.js';

export interface ListWatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Adjusts every list and watch request (after the selectors were set). */
  tweak?(opts: ListOptions | WatchOptions): void;
  /** Watch events' objects come without metadata.managedFields (WatchOptions.dropManagedFields). */
  dropManagedFields?: boolean;
}

/** Lists and watches `ri` (already scoped to a namespace when wanted). */
export function listWatchFromClient<T extends KubeObject>(
  ri: ResourceInterface<T>,
  opts: ListWatchOptions = {},
): ListerWatcher<T> {
  const withSelectors = <O extends ListOptions | WatchOptions>(o: O): O => {
    const out = { ...o };
    if (opts.labelSelector) out.labelSelector = opts.labelSelector;
    if (opts.fieldSelector) out.fieldSelector = opts.fieldSelector;
    opts.tweak?.(out);
    return out;
  };
  return {
    list(o: ListOptions): Promise<KubeList<T>> {
      return ri.list(withSelectors(o));
    },
    watch(o: WatchOptions, signal: AbortSignal): Promise<Watch<T>> {
      const w = withSelectors(o);
      if (opts.dropManagedFields) w.dropManagedFields = true;
      return ri.watch(w, signal);
    },
  };
}
