// The dashboard's API client: JSON from /api/, a 401 sends the viewer to the login page.

export interface Page<T> {
  items: T[];
  continue?: string;
  remaining?: number;
  notes?: string[];
}

export class APIError extends Error {
  constructor(
    public status: number,
    message: string,
  ) {
    super(message);
  }
}

interface ErrorBody {
  error?: string;
  login?: string;
}

async function answer<T>(res: Response): Promise<T> {
  if (res.ok) return (await res.json()) as T;
  let body: ErrorBody = {};
  try {
    body = (await res.json()) as ErrorBody;
  } catch {
    // not JSON: keep the status text
  }
  if (res.status === 401 && body.login) {
    window.location.assign(body.login);
  }
  throw new APIError(res.status, body.error ?? `${res.status} ${res.statusText}`);
}

export async function get<T>(path: string, params: Record<string, string | undefined> = {}): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const qs = q.toString();
  return answer<T>(await fetch(qs ? `${path}?${qs}` : path, { credentials: "same-origin" }));
}

export async function post<T>(path: string, body: string): Promise<T> {
  return answer<T>(
    await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/yaml" },
      body,
    }),
  );
}
