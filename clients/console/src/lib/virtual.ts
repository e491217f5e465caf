/**
 * The windowing math of the virtual list: rows of one fixed height, of
 * which only those in view (and a few either side) are in the DOM.
 */

export interface WindowInput {
  scrollTop: number;
  viewportHeight: number;
  rowHeight: number;
  count: number;
  /** Extra rows rendered above and below the visible ones. */
  overscan?: number;
}

export interface Window {
  /** The first rendered row. */
  start: number;
  /** One past the last rendered row. */
  end: number;
  /** Space above the first rendered row, px. */
  padTop: number;
  /** Space below the last rendered row, px. */
  padBottom: number;
  /** The height of all rows, px. */
  total: number;
}

export function visibleWindow({ scrollTop, viewportHeight, rowHeight, count, overscan = 6 }: WindowInput): Window {
  const total = Math.max(0, count) * rowHeight;
  if (count <= 0 || rowHeight <= 0) return { start: 0, end: 0, padTop: 0, padBottom: 0, total: 0 };
  const top = Math.min(Math.max(0, scrollTop), Math.max(0, total - Math.max(0, viewportHeight)));
  const first = Math.floor(top / rowHeight);
  const visible = Math.ceil((top + Math.max(0, viewportHeight)) / rowHeight) - first;
  const start = Math.max(0, first - overscan);
  const end = Math.min(count, first + Math.max(1, visible) + overscan);
  return { start, end, padTop: start * rowHeight, padBottom: (count - end) * rowHeight, total };
}

/**
 * The scrollTop that brings row `index` into view, moving as little as
 * possible (unchanged when it is already whole in view).
 */
export function scrollToRow(index: number, scrollTop: number, viewportHeight: number, rowHeight: number): number {
  const top = index * rowHeight;
  const bottom = top + rowHeight;
  if (top < scrollTop) return top;
  if (bottom > scrollTop + viewportHeight) return Math.max(0, bottom - viewportHeight);
  return scrollTop;
}

/** Whether the rendered window is close enough to the end to load the next page. */
export function nearEnd(w: Window, count: number, threshold = 50): boolean {
  return count - w.end <= threshold;
}
