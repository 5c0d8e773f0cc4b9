import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import type { ListOptions, ResourceInterface, WatchOptions } from '../../client/interfaces.js';
import { listWatchFromClient } from './list-watch.js';
import { newFakeWatch } from './testing/fake-lister-watcher.js';

describe('listWatchFromClient', () => {
  it('adds the selectors and the tweak to every list and watch request', async () => {
    const seen: (ListOptions | WatchOptions)[] = [];
    const ri = {
      list: async (o: ListOptions) => {
        seen.push(o);
        return { metadata: { resourceVersion: '1' }, items: [] };
      },
      watch: async (o: WatchOptions) => {
        seen.push(o);
        return newFakeWatch(o);
      },
    } as unknown as ResourceInterface<KubeObject>;
    const lw = listWatchFromClient(ri, {
      labelSelector: 'app=web',
      fieldSelector: 'spec.nodeName=n1',
      tweak: (o) => void (o.timeoutSeconds ??= 7),
    });
    await lw.list({ limit: 500, resourceVersion: '0' });
    await lw.watch({ resourceVersion: '1', allowWatchBookmarks: true }, new AbortController().signal);
    assert.deepEqual(seen[0], { limit: 500, resourceVersion: '0', labelSelector: 'app=web', fieldSelector: 'spec.nodeName=n1', timeoutSeconds: 7 });
    assert.deepEqual(seen[1], { resourceVersion: '1', allowWatchBookmarks: true, labelSelector: 'app=web', fieldSelector: 'spec.nodeName=n1', timeoutSeconds: 7 });
  });
});
