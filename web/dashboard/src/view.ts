import type { Changes } from './store.js';

/** One page of the dashboard; `update` runs at most once per animation frame. */
export interface View {
  el: HTMLElement;
  update(ch: Changes): void;
  destroy?(): void;
}

export interface Ctx {
  /** Open the side panel on an object. */
  select(uid: string): void;
  selected(): string | null;
}

export type ViewFactory = (params: URLSearchParams, ctx: Ctx) => View;

