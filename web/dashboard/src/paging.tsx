import { useEffect, useState } from "preact/hooks";
import { get, type Page } from "./api";
import { useLive } from "./live";

export interface Paged<P> {
  data?: P;
  error?: string;
  loading: boolean;
  next?: () => void;
  prev?: () => void;
  pageNumber: number;
}

// usePaged fetches one page of path at a time with the server's continue tokens, and refetches the
// current page on live changes. The order is the server's, which is stable (by name).
export function usePaged<T, P extends Page<T> = Page<T>>(
  path: string,
  view: string,
  params: Record<string, string | undefined> = {},
  onFirst?: () => void,
): Paged<P> {
  const [tokens, setTokens] = useState<string[]>([""]);
  const [data, setData] = useState<P>();
  const [error, setError] = useState<string>();
  const [loading, setLoading] = useState(true);
  const tick = useLive(view, params.namespace);
  const key = JSON.stringify(params);
  useEffect(() => setTokens([""]), [path, key]);
  const token = tokens[tokens.length - 1];
  useEffect(() => {
    let live = true;
    get<P>(path, { ...params, continue: token || undefined })
      .then((d) => {
        if (!live) return;
        setData(d);
        setError(undefined);
        setLoading(false);
      })
      .catch((e: Error) => {
        if (!live) return;
        setError(e.message);
        setData(undefined);
        setLoading(false);
      });
    return () => {
      live = false;
    };
  }, [path, key, token, tick]);
  useEffect(() => {
    if (data && onFirst) onFirst();
  }, [data]);
  return {
    data,
    error,
    loading,
    pageNumber: tokens.length,
    next: data?.continue ? () => setTokens([...tokens, data.continue ?? ""]) : undefined,
    prev: tokens.length > 1 ? () => setTokens(tokens.slice(0, -1)) : undefined,
  };
}

export function Pager<P>({ p, label }: { p: Paged<P>; label: string }) {
  const remaining = (p.data as Page<unknown> | undefined)?.remaining;
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" onClick={p.prev} disabled={!p.prev}>
        Previous page
      </button>
      <span>
        Page {p.pageNumber}
        {remaining ? ` (${remaining} more after this page)` : ""}
      </span>
      <button type="button" onClick={p.next} disabled={!p.next}>
        Next page
      </button>
    </nav>
  );
}

// Alert says what went wrong, when something did.
export function Alert({ error }: { error?: string }) {
  if (!error) return null;
  return (
    <p role="alert" class="error">
      {error}
    </p>
  );
}

export function Status<P>({ p }: { p: Paged<P> }) {
  if (p.error) return <Alert error={p.error} />;
  if (p.loading) return <p aria-live="polite">Loading…</p>;
  const notes = (p.data as Page<unknown> | undefined)?.notes;
  return notes && notes.length > 0 ? (
    <ul class="notes">
      {notes.map((n) => (
        <li key={n}>{n}</li>
      ))}
    </ul>
  ) : null;
}

// firstRender marks, once per page load and view, the Performance API mark the browser tests read:
// the time from navigation start to the first page of data on screen.
const marked = new Set<string>();
export function firstRender(view: string) {
  if (marked.has(view)) return;
  marked.add(view);
  const mark = () => performance.mark(`flotilla:first-render:${view}`);
  // A page in the background gets no animation frames.
  if (document.visibilityState === "hidden") setTimeout(mark, 0);
  else requestAnimationFrame(mark);
}
