import { useEffect, useState } from "preact/hooks";

// One EventSource per view and namespace, shared by the page's components: a browser allows only
// six connections to a host over HTTP/1.1, and each stream holds one open.
interface Stream {
  es: EventSource;
  listeners: Set<() => void>;
}
const streams = new Map<string, Stream>();

function subscribe(view: string, namespace: string | undefined, on: () => void): () => void {
  const q = new URLSearchParams({ view });
  if (namespace) q.set("namespace", namespace);
  const key = q.toString();
  let s = streams.get(key);
  if (!s) {
    const es = new EventSource(`/api/events?${key}`);
    const created: Stream = { es, listeners: new Set() };
    es.addEventListener("change", () => created.listeners.forEach((l) => l()));
    streams.set(key, created);
    s = created;
  }
  s.listeners.add(on);
  const mine = s;
  return () => {
    mine.listeners.delete(on);
    if (mine.listeners.size === 0) {
      mine.es.close();
      streams.delete(key);
    }
  };
}

// Leaving the page closes its streams, so that a page kept in the back/forward cache holds no
// connection; coming back to it loads it again.
window.addEventListener("pagehide", () => {
  streams.forEach((s) => s.es.close());
  streams.clear();
});
window.addEventListener("pageshow", (e) => {
  if (e.persisted) window.location.reload();
});

// useLive returns a number that grows whenever the server says what the view shows changed
// (Server-Sent Events fed by watches with the viewer's identity); pages refetch on it.
export function useLive(view: string, namespace?: string): number {
  const [tick, setTick] = useState(0);
  useEffect(() => subscribe(view, namespace, () => setTick((t) => t + 1)), [view, namespace]);
  return tick;
}
