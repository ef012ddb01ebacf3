import { useEffect, useState } from "preact/hooks";

// One EventSource per view and namespace, shared by the page's components. A browser opens at most
// six connections to a host over HTTP/1.1 (`flotilla dashboard` on loopback), and each stream holds
// one, so a page holds its streams only while it is visible: a hidden tab (another tab in front of
// it, a minimized window) closes them, and when it is shown again it opens them and refetches once,
// since changes went unheard meanwhile. Any number of tabs may be open; only those on screen count.
interface Stream {
  url: string;
  es: EventSource | null;
  listeners: Set<() => void>;
}
const streams = new Map<string, Stream>();

function open(s: Stream) {
  const es = new EventSource(s.url);
  es.addEventListener("change", () => s.listeners.forEach((l) => l()));
  s.es = es;
}

function close(s: Stream) {
  s.es?.close();
  s.es = null;
}

function subscribe(view: string, namespace: string | undefined, on: () => void): () => void {
  const q = new URLSearchParams({ view });
  if (namespace) q.set("namespace", namespace);
  const key = q.toString();
  let s = streams.get(key);
  if (!s) {
    s = { url: `/api/events?${key}`, es: null, listeners: new Set() };
    if (document.visibilityState !== "hidden") open(s);
    streams.set(key, s);
  }
  s.listeners.add(on);
  const mine = s;
  return () => {
    mine.listeners.delete(on);
    if (mine.listeners.size === 0) {
      close(mine);
      streams.delete(key);
    }
  };
}

document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "hidden") {
    streams.forEach(close);
    return;
  }
  streams.forEach((s) => {
    if (s.es) return;
    open(s);
    s.listeners.forEach((l) => l());
  });
});

// Leaving the page closes its streams, so that a page kept in the back/forward cache holds no
// connection; coming back to it loads it again.
window.addEventListener("pagehide", () => {
  streams.forEach(close);
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

// useEvery returns a number that grows every `seconds` (never when seconds is 0 or undefined): a
// history takes a sample each interval whether or not anything changed, and its chart refetches
// then too.
export function useEvery(seconds: number | undefined): number {
  const [n, setN] = useState(0);
  useEffect(() => {
    if (!seconds) return;
    const t = setInterval(() => setN((x) => x + 1), seconds * 1000);
    return () => clearInterval(t);
  }, [seconds]);
  return n;
}
