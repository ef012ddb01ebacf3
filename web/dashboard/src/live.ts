import { useEffect, useState } from "preact/hooks";

// useLive returns a number that grows whenever the server says what the view shows changed
// (Server-Sent Events fed by watches with the viewer's identity); pages refetch on it.
export function useLive(view: string, namespace?: string): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const q = new URLSearchParams({ view });
    if (namespace) q.set("namespace", namespace);
    const es = new EventSource(`/api/events?${q.toString()}`);
    es.addEventListener("change", () => setTick((t) => t + 1));
    return () => es.close();
  }, [view, namespace]);
  return tick;
}
