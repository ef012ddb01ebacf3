import * as Plot from "@observablehq/plot";
import { useEffect, useMemo, useState } from "preact/hooks";
import { get } from "../api";
import { Chart } from "../chart";
import { useEvery, useLive } from "../live";
import { Alert, firstRender } from "../paging";
import { Link } from "../router";
import type { PendingWorkload, QueuesPage, QueueView, TeamView } from "../types";

// The queue view: per FleetQueue, each team's GPUs of each model over time against its fair
// share, what it holds and is owed now, and the head of each team's queue with its gangs.

const anyModel = "";

function modelLabel(m: string): string {
  return m === anyModel ? "any model" : m;
}

function pods(k: number): string {
  return k === 1 ? "1 pod" : `${k} pods`;
}

function n(x: number | undefined): string {
  const v = x ?? 0;
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

interface SharePoint {
  time: Date;
  team: string;
  used: number;
  fair: number;
}

// points are a model's samples per team, then now (the API's current figures) as the last point.
function points(q: QueueView, model: string, at: Date): SharePoint[] {
  const out: SharePoint[] = [];
  for (const s of q.history) {
    if (s.model !== model) continue;
    for (const p of s.points) out.push({ time: new Date(p.time), team: s.team, used: p.used, fair: p.fair });
  }
  for (const t of q.teams) out.push({ time: at, team: t.name, used: t.used[model] ?? 0, fair: t.fair[model] ?? 0 });
  return out;
}

function nowText(t: TeamView, model: string): string {
  const used = t.used[model] ?? 0;
  const fair = t.fair[model] ?? 0;
  const where = used > fair + 1e-9 ? `over its share by ${n(used - fair)}` : used + 1e-9 < fair ? `under its share by ${n(fair - used)}` : "at its share";
  return `team ${t.name}: holds ${used} ${modelLabel(model)} GPUs, fair share ${n(fair)} (${where})`;
}

function shareOptions(q: QueueView, model: string, at: Date): Plot.PlotOptions {
  const rows = points(q, model, at);
  const last = q.teams.map((t) => ({
    time: at,
    team: t.name,
    used: t.used[model] ?? 0,
    fair: t.fair[model] ?? 0,
    text: nowText(t, model),
    fairText: `team ${t.name}: fair share ${n(t.fair[model])} ${modelLabel(model)} GPUs`,
  }));
  return {
    height: 40 + 110 * q.teams.length,
    marginLeft: 50,
    marginRight: 90,
    x: { type: "time", label: null },
    y: { label: "GPUs", grid: true, zero: true },
    fy: { label: null, domain: q.teams.map((t) => t.name), tickFormat: (t: string) => `team ${t}` },
    marks: [
      Plot.frame({ stroke: "#e0e0e0" }),
      Plot.lineY(rows, { x: "time", y: "fair", fy: "team", className: "line-fair", curve: "step-after" }),
      Plot.lineY(rows, { x: "time", y: "used", fy: "team", className: "line-used", curve: "step-after" }),
      Plot.dot(last, { x: "time", y: "fair", fy: "team", r: 5, className: "focusable now-fair", ariaLabel: "fairText", title: "fairText" }),
      Plot.dot(last, { x: "time", y: "used", fy: "team", r: 5, className: "focusable now-used", ariaLabel: "text", title: "text" }),
    ],
  };
}

function queueOptions(t: TeamView): Plot.PlotOptions {
  const rows = t.queue.map((w) => ({ ...w, row: `${w.position}. ${w.namespace}/${w.name}`, text: pendingText(w) }));
  return {
    height: 40 + 24 * rows.length,
    marginLeft: Math.min(320, 12 + 7 * Math.max(...rows.map((r) => r.row.length))),
    marginRight: 60,
    x: { label: "GPUs asked", grid: true },
    y: { label: null, domain: rows.map((r) => r.row), padding: 0.2 },
    marks: [
      Plot.barX(rows, { x: "gpus", y: "row", className: "focusable pending-bar", ariaLabel: "text", title: "text" }),
      Plot.text(rows, { x: "gpus", y: "row", text: (w: PendingWorkload) => pods(w.pods), textAnchor: "start", dx: 4, ariaHidden: "true" }),
    ],
  };
}

function pendingText(w: PendingWorkload): string {
  return `${w.position}. ${w.namespace}/${w.name}: a gang of ${pods(w.pods)} asking ${w.gpus} ${w.model ? w.model : "GPUs of any model"}${w.priority ? `, priority ${w.priority}` : ""}, queued ${w.queued}`;
}

function models(q: QueueView): string[] {
  const all = new Set<string>(q.models.map((m) => m.model));
  for (const s of q.history) if (s.model !== anyModel) all.add(s.model);
  return [...all].sort();
}

function FleetQueue({ q, at, interval }: { q: QueueView; at: Date; interval: number }) {
  const ms = models(q);
  const opts = useMemo(() => new Map(ms.map((m) => [m, shareOptions(q, m, at)])), [q, at]);
  const anyFair = q.teams.some((t) => (t.fair[anyModel] ?? 0) > 0);
  return (
    <section class="fleetqueue" data-queue={q.name} aria-labelledby={`fq-${q.name}`}>
      <h3 id={`fq-${q.name}`}>
        FleetQueue {q.name}
      </h3>
      <p>
        Admission check {q.admissionCheck}; reclaim {q.reclaim}; {q.teams.length} teams; the fleet's GPUs:{" "}
        {q.models.map((m) => `${m.gpus} ${m.model}`).join(", ") || "none yet"}.
      </p>
      {q.notReady && <Alert error={`Not ready: ${q.notReady}`} />}
      <p class="legend">
        <span class="swatch"><svg width="24" height="10" aria-hidden="true"><line class="line-used" x1="0" y1="5" x2="24" y2="5" /></svg>GPUs the team holds (solid; filled dot now)</span>
        <span class="swatch"><svg width="24" height="10" aria-hidden="true"><line class="line-fair" x1="0" y1="5" x2="24" y2="5" /></svg>its fair share (dashed; hollow dot now)</span>
        <span>{interval ? `a sample every ${interval}s, and now` : "now only: this dashboard keeps no history"}</span>
      </p>
      {ms.map((m) => (
        <div class="share" data-model={m} key={m}>
          <h4>{m}</h4>
          <Chart options={opts.get(m) ?? {}} label={`${q.name}, ${m}: each team's GPUs held over time against its fair share`} />
        </div>
      ))}
      <table>
        <caption>
          Per team now: GPUs held and fair share per model (fair: guarantees first, then weighted max-min fairness of every team's demand, as internal/queuesim
          computes it){anyFair ? "; any model: a fair share of GPUs no team asked for by model, for workloads that name none" : ""}
        </caption>
        <thead>
          <tr>
            <th scope="col">Team</th>
            <th scope="col">Weight</th>
            {ms.map((m) => (
              <th scope="col" key={m}>
                {m}: held / fair
              </th>
            ))}
            {anyFair && <th scope="col">Any model: fair</th>}
            <th scope="col">Pending</th>
          </tr>
        </thead>
        <tbody>
          {q.teams.map((t) => (
            <tr key={t.name} data-team={t.name}>
              <th scope="row">
                {t.name} ({t.namespace})
              </th>
              <td>{n(t.weight)}</td>
              {ms.map((m) => (
                <td key={m} class={(t.used[m] ?? 0) > (t.fair[m] ?? 0) + 1e-9 ? "over" : ""}>
                  {t.used[m] ?? 0} / {n(t.fair[m])}
                  {t.guaranteed[m] ? ` (${t.guaranteed[m]} guaranteed)` : ""}
                </td>
              ))}
              {anyFair && <td>{n(t.fair[anyModel])}</td>}
              <td>{t.pending}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h4>Pending, in queue order</h4>
      {q.teams.map((t) => (
        <div class="team-queue" data-team={t.name} key={t.name}>
          <h5>
            Team {t.name}: {t.pending === 0 ? "nothing pending" : `${t.pending} pending${t.pending > t.queue.length ? `, the first ${t.queue.length} shown` : ""}`}
          </h5>
          {t.queue.length > 0 && (
            <>
              <Chart options={queueOptions(t)} label={`team ${t.name}'s pending workloads in queue order, each bar the GPUs its gang asks`} />
              <ol class="pending">
                {t.queue.map((w) => (
                  <li key={`${w.namespace}/${w.name}`} data-workload={`${w.namespace}/${w.name}`}>
                    <Link href={`/jobs/${encodeURIComponent(w.namespace)}/${encodeURIComponent(w.name)}`}>
                      {w.namespace}/{w.name}
                    </Link>
                    : {pods(w.pods)}, {w.gpus} {w.model ? w.model : "GPUs of any model"}
                    {w.priority ? `, priority ${w.priority}` : ""}, queued <time dateTime={w.queued}>{w.queued}</time>
                  </li>
                ))}
              </ol>
            </>
          )}
        </div>
      ))}
    </section>
  );
}

export function Queues() {
  const [data, setData] = useState<QueuesPage>();
  const [error, setError] = useState<string>();
  const [at, setAt] = useState(new Date());
  const tick = useLive("queues");
  // A new sample is taken every interval whether or not anything changed: fetch it then too.
  const samples = useEvery(data?.intervalSeconds);
  useEffect(() => {
    let live = true;
    get<QueuesPage>("/api/queues")
      .then((d) => {
        if (!live) return;
        setData(d);
        setAt(new Date());
        setError(undefined);
        firstRender("queues");
      })
      .catch((e: Error) => live && setError(e.message));
    return () => {
      live = false;
    };
  }, [tick, samples]);
  return (
    <section aria-labelledby="queues-h">
      <h2 id="queues-h">Queues</h2>
      <Alert error={error} />
      {data && !data.served && <p>{data.message}</p>}
      {data && data.served && data.queues.length === 0 && <p>No FleetQueues: docs/queueing.md says how to share the fleet between teams with one.</p>}
      {data?.queues.map((q) => (
        <FleetQueue key={q.name} q={q} at={at} interval={data.intervalSeconds} />
      ))}
    </section>
  );
}
