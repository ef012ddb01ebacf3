// Formatting shared by the views.

export function age(seconds?: number): string {
  if (seconds === undefined || seconds === null) return "—";
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

export function pairs(m: Record<string, string | number> | undefined): string {
  if (!m) return "";
  return Object.keys(m)
    .sort()
    .map((k) => `${k}=${m[k]}`)
    .join(", ");
}

// statusClass colors a condition status; the text says it too, so color is never the only cue.
export function statusClass(s?: string): string {
  if (s === "True") return "ok";
  if (s === "False") return "bad";
  return "unknown";
}
