import * as Plot from "@observablehq/plot";
import { useEffect, useMemo, useState } from "preact/hooks";
import { usePaged, Pager, Status, firstRender } from "../paging";
import type { ClusterGPUs, Figures, GPUHistory, GPUPoint, ModelTotal, NodeGPUs } from "../types";
import { get, type Page } from "../api";
import { useEvery, useLive } from "../live";
import { statusClass } from "../format";
import { Link } from "../router";
import { Chart, Swatch } from "../chart";

type GPUPage = Page<ClusterGPUs> & { models: ModelTotal[] };

// A cell's or segment's state. Each has its own class (style.css): dark filled, white outlined,
// grey dashed, told apart by lightness and outline, not by hue.
type State = "used" | "free" | "expired";

const stateWords: Record<State, string> = { used: "used", free: "free", expired: "figures expired or missing" };

function Legend() {
  return (
    <p class="legend">
      <Swatch class="gpu-used">used</Swatch> <Swatch class="gpu-free">free</Swatch>{" "}
      <Swatch class="gpu-expired">figures expired or missing (not counted)</Swatch>
    </p>
  );
}

const label = (model: string) => model || "(unnamed)";

// One bar segment of the fleet's picture: a cluster's GPUs of a model in one state.
interface Segment {
  row: string;
  state: State;
  x1: number;
  x2: number;
  title: string;
}

// fleetBars is the page's picture: per cluster and model, a bar of its allocatable GPUs split
// into used and free when its figures are current, drawn as expired when they are not.
function fleetBars(items: ClusterGPUs[]): { segments: Segment[]; rows: { row: string; total: number; text: string; note: string }[] } {
  const segments: Segment[] = [];
  const rows: { row: string; total: number; text: string; note: string }[] = [];
  for (const c of items) {
    for (const m of c.models) {
      const row = `${c.cluster} · ${label(m.model)}`;
      const f = m.figures;
      if (c.usage === "current" && f) {
        const used = f.allocatable - f.free;
        segments.push({ row, state: "used", x1: 0, x2: used, title: `${row}: ${used} of ${f.allocatable} used` });
        segments.push({ row, state: "free", x1: used, x2: f.allocatable, title: `${row}: ${f.free} free, at most ${f.mostFreeOnANode} on one node` });
        rows.push({ row, total: f.allocatable, text: `${row}: ${used} of ${f.allocatable} GPUs used, ${f.free} free, at most ${f.mostFreeOnANode} free on one node`, note: `≤${f.mostFreeOnANode}/node` });
      } else {
        const total = f?.allocatable ?? m.allocatable;
        segments.push({ row, state: "expired", x1: 0, x2: total, title: `${row}: ${total} GPUs, figures ${c.usage}` });
        rows.push({ row, total, text: `${row}: ${total} GPUs, free figures ${c.usage === "none" ? "missing" : "expired"}`, note: "" });
      }
    }
  }
  return { segments, rows };
}

function fleetOptions(items: ClusterGPUs[]): Plot.PlotOptions {
  const { segments, rows } = fleetBars(items);
  const marks: Plot.Markish[] = (["used", "free", "expired"] as State[]).map((s) =>
    barX(segments.filter((g) => g.state === s), s),
  );
  marks.push(
    barXOverlay(rows.map((r) => ({ row: r.row, x1: 0, x2: r.total, text: r.text }))),
    textAt(rows.map((r) => ({ row: r.row, x: r.total, note: r.note }))),
  );
  return {
    height: 50 + 24 * rows.length,
    marginLeft: leftMargin(rows.map((r) => r.row)),
    marginRight: 80,
    x: { label: "GPUs", grid: true },
    y: { label: null, domain: rows.map((r) => r.row), padding: 0.2 },
    marks,
  };
}

function barX(data: Segment[], s: State) {
  return Plot.barX(data, { x1: "x1", x2: "x2", y: "row", className: `gpu-${s}`, inset: 0.5, title: "title" });
}

function barXOverlay(data: { row: string; x1: number; x2: number; text: string }[]) {
  return Plot.barX(data, { x1: "x1", x2: "x2", y: "row", className: "focusable", fillOpacity: 0, pointerEvents: "none", ariaLabel: "text" });
}

function textAt(data: { row: string; x: number; note: string }[]) {
  return Plot.text(data, { x: "x", y: "row", text: "note", textAnchor: "start", dx: 4, ariaHidden: "true" });
}

function leftMargin(labels: string[]): number {
  return Math.min(360, 12 + 7 * Math.max(8, ...labels.map((l) => l.length)));
}

// A cell of the GPU map: one GPU of a node.
interface Cell {
  node: string;
  state: State;
  x1: number;
  x2: number;
  title: string;
}

// nodeCells draws each node of a model as a row of cells, one per GPU: used ones first, then
// free ones; every cell expired when the cluster's figures are not current.
export function nodeCells(nodes: NodeGPUs[], current: boolean): Cell[] {
  const out: Cell[] = [];
  for (const n of nodes) {
    const used = n.allocatable - n.free;
    for (let i = 0; i < n.allocatable; i++) {
      const state: State = !current ? "expired" : i < used ? "used" : "free";
      out.push({ node: n.name, state, x1: i, x2: i + 1, title: `${n.name} · GPU ${i + 1} of ${n.allocatable}: ${stateWords[state]}` });
    }
  }
  return out;
}

function nodeOptions(f: Figures, current: boolean): Plot.PlotOptions {
  const nodes = f.nodes ?? [];
  const cells = nodeCells(nodes, current);
  const widest = Math.max(1, ...nodes.map((n) => n.allocatable));
  return {
    height: 50 + 28 * nodes.length,
    width: Math.max(240, leftMargin(nodes.map((n) => n.name)) + 32 * widest + 20),
    marginLeft: leftMargin(nodes.map((n) => n.name)),
    x: { label: "GPU", domain: [0, widest], ticks: [] },
    y: { label: null, domain: nodes.map((n) => n.name), padding: 0.1 },
    marks: [
      ...(["used", "free", "expired"] as State[]).map((s) =>
        Plot.rect(cells.filter((c) => c.state === s), { x1: "x1", x2: "x2", y: "node", className: `gpu-${s}`, inset: 2, title: "title" }),
      ),
      Plot.barX(
        nodes.map((n) => ({ node: n.name, x1: 0, x2: n.allocatable, text: nodeText(n, current) })),
        { x1: "x1", x2: "x2", y: "node", className: "focusable", fillOpacity: 0, pointerEvents: "none", ariaLabel: "text" },
      ),
    ],
  };
}

function nodeText(n: NodeGPUs, current: boolean): string {
  const used = n.allocatable - n.free;
  if (!current) return `node ${n.name}: ${n.allocatable} GPUs, figures expired (last seen ${used} used, ${n.free} free)`;
  return `node ${n.name}: ${used} of ${n.allocatable} GPUs used, ${n.free} free${n.requested > n.allocatable ? ` (${n.requested} requested)` : ""}`;
}

export function GPUs() {
  const p = usePaged<ClusterGPUs, GPUPage>("/api/gpus", "gpus", {}, () => firstRender("gpus"));
  const options = useMemo(() => (p.data ? fleetOptions(p.data.items) : undefined), [p.data]);
  return (
    <section aria-labelledby="gpus-h">
      <h2 id="gpus-h">GPUs</h2>
      <Status p={p} />
      {p.data && (
        <>
          <table>
            <caption>Per model, over the fleet (free counts only clusters whose figures are current)</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Clusters</th>
                <th scope="col">Allocatable</th>
                <th scope="col">Free</th>
                <th scope="col">Most free on a node</th>
                <th scope="col">Clusters with current figures</th>
              </tr>
            </thead>
            <tbody>
              {p.data.models.map((m) => (
                <tr key={m.model}>
                  <th scope="row">{label(m.model)}</th>
                  <td>{m.clusters}</td>
                  <td>{m.allocatable}</td>
                  <td>{m.free}</td>
                  <td>{m.mostFreeOnANode}</td>
                  <td>{m.clustersWithCurrentFigures}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <FreeOverTime now={p.data.models} />
          <h3>GPU map</h3>
          <Legend />
          {options && <Chart options={options} label="Each cluster's GPUs of each model on this page: used, free, or with expired figures; open a cluster to see its nodes" />}
          <table>
            <caption>Per cluster and model: allocatable, used, free, and the largest free block on one node; open a cluster for its nodes</caption>
            <thead>
              <tr>
                <th scope="col">Cluster</th>
                <th scope="col">Model</th>
                <th scope="col">Allocatable</th>
                <th scope="col">Used</th>
                <th scope="col">Free</th>
                <th scope="col">Largest free block</th>
                <th scope="col">Nodes with at least k free</th>
                <th scope="col">Figures</th>
              </tr>
            </thead>
            <tbody>
              {p.data.items.flatMap((c) =>
                (c.models.length ? c.models : [{ model: "", allocatable: c.allocatable }]).map((m, i) => {
                  const f = "figures" in m ? m.figures : undefined;
                  const expired = c.usage !== "current";
                  return (
                    <tr key={`${c.cluster}/${m.model}`} data-cluster={c.cluster} class={expired ? "expired" : ""}>
                      {i === 0 ? (
                        <th scope="row" rowSpan={Math.max(c.models.length, 1)}>
                          <Link href={`/gpus/${encodeURIComponent(c.cluster)}`}>{c.cluster}</Link> <span class={statusClass(c.available)}>({c.available})</span>
                        </th>
                      ) : null}
                      <td>{label(m.model)}</td>
                      <td>{m.allocatable}</td>
                      <td>{f ? f.requested : "—"}</td>
                      <td>{f ? f.free : "—"}</td>
                      <td>{f ? f.mostFreeOnANode : "—"}</td>
                      <td>{f ? f.freeNodes.map((n) => `${n.nodes}×≥${n.free}`).join(", ") : "—"}</td>
                      <td>
                        <FigureState c={c} />
                      </td>
                    </tr>
                  );
                }),
              )}
            </tbody>
          </table>
        </>
      )}
      <Pager p={p} label="GPU clusters" />
    </section>
  );
}

function FigureState({ c }: { c: ClusterGPUs }) {
  if (c.usage === "current") return <>current</>;
  if (c.usage === "expired") return <strong>expired{c.validUntil ? ` (valid until ${c.validUntil})` : ""}</strong>;
  return <>none: enable resource-usage</>;
}

// GPUCluster is the GPU map zoomed into one cluster: per model, each node a row of cells.
export function GPUCluster({ name }: { name: string }) {
  const p = usePaged<ClusterGPUs, GPUPage>("/api/gpus", "gpus", { cluster: name }, () => firstRender("gpus-cluster"));
  const c = p.data?.items[0];
  return (
    <section aria-labelledby="gpu-cluster-h">
      <h2 id="gpu-cluster-h">
        GPUs of {name} <Link href="/gpus">(all clusters)</Link>
      </h2>
      <Status p={p} />
      {c && (
        <>
          <p>
            Available: <span class={statusClass(c.available)}>{c.available}</span>. Figures: <FigureState c={c} />
            {c.observedTime ? `, observed ${c.observedTime}` : ""}.
          </p>
          <Legend />
          {c.models.map((m) => (
            <ModelNodes key={m.model} model={m.model} f={m.figures} current={c.usage === "current"} />
          ))}
        </>
      )}
    </section>
  );
}

function ModelNodes({ model, f, current }: { model: string; f?: Figures; current: boolean }) {
  const options = useMemo(() => (f?.nodes?.length ? nodeOptions(f, current) : undefined), [f, current]);
  return (
    <section class="model" data-model={model}>
      <h3>{label(model)}</h3>
      {!f?.nodes?.length ? (
        <p>No per-node figures for this model: the cluster's resource-usage agent sends none (an older agent, or none enabled).</p>
      ) : (
        <>
          {options && <Chart options={options} label={`${label(model)}: each node a row of GPUs, used first, then free`} />}
          <table>
            <caption>{label(model)} per node</caption>
            <thead>
              <tr>
                <th scope="col">Node</th>
                <th scope="col">Allocatable</th>
                <th scope="col">Used</th>
                <th scope="col">Free</th>
              </tr>
            </thead>
            <tbody>
              {f.nodes.map((n) => (
                <tr key={n.name} data-node={n.name} class={current ? "" : "expired"}>
                  <th scope="row">{n.name}</th>
                  <td>{n.allocatable}</td>
                  <td>{n.allocatable - n.free}</td>
                  <td>{n.free}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

// withNow is a model's recorded series with the current totals (the viewer's own read) as its
// last point, so the chart moves as soon as the fleet does, between samples.
export function withNow(points: GPUPoint[], now: ModelTotal | undefined, at: Date): GPUPoint[] {
  if (!now) return points;
  return [...points, { time: at.toISOString(), allocatable: now.allocatable, free: now.free }];
}

function overTimeOptions(points: GPUPoint[]): Plot.PlotOptions {
  const rows = points.flatMap((p) => [
    { time: new Date(p.time), value: p.allocatable, what: "allocatable" },
    { time: new Date(p.time), value: p.free, what: "free" },
  ]);
  return {
    height: 180,
    marginLeft: 50,
    x: { type: "time", label: null },
    y: { label: "GPUs", grid: true, zero: true },
    marks: [
      Plot.lineY(rows.filter((r) => r.what === "allocatable"), { x: "time", y: "value", className: "line-allocatable", curve: "step-after", tip: true }),
      Plot.lineY(rows.filter((r) => r.what === "free"), { x: "time", y: "value", className: "line-free", curve: "step-after", tip: true }),
    ],
  };
}

// FreeOverTime draws, per model, the fleet's allocatable and free GPUs over the hub's recorded
// samples and now.
function FreeOverTime({ now }: { now: ModelTotal[] }) {
  const [history, setHistory] = useState<GPUHistory>();
  const [error, setError] = useState<string>();
  const tick = useLive("gpus");
  // A new sample is taken every interval whether or not anything changed: fetch it then too.
  const samples = useEvery(history?.intervalSeconds);
  useEffect(() => {
    let live = true;
    get<GPUHistory>("/api/gpus/history")
      .then((h) => live && (setHistory(h), setError(undefined)))
      .catch((e: Error) => live && setError(e.message));
    return () => {
      live = false;
    };
  }, [tick, samples]);
  const at = useMemo(() => new Date(), [now]);
  if (error) return <p class="notes">Free GPUs over time: {error}</p>;
  if (!history) return null;
  const models = [...new Set([...history.models.map((m) => m.model), ...now.map((m) => m.model)])].sort();
  const minutes = Math.round((history.intervalSeconds * history.samples) / 60);
  return (
    <section aria-labelledby="over-time-h">
      <h3 id="over-time-h">Free GPUs over time</h3>
      <p class="legend">
        <span class="swatch"><svg width="24" height="10" aria-hidden="true"><line class="line-allocatable" x1="0" y1="5" x2="24" y2="5" /></svg>allocatable (dashed)</span>
        <span class="swatch"><svg width="24" height="10" aria-hidden="true"><line class="line-free" x1="0" y1="5" x2="24" y2="5" /></svg>free on clusters with current figures (solid)</span>
        <span>
          a sample every {history.intervalSeconds}s, the last {minutes} minutes, and now
        </span>
      </p>
      {models.map((model) => {
        const points = withNow(history.models.find((m) => m.model === model)?.points ?? [], now.find((m) => m.model === model), at);
        const free = points.map((p) => p.free);
        return (
          <div class="over-time" data-model={model} key={model}>
            <h4>{label(model)}</h4>
            <Chart options={overTimeOptions(points)} label={`${label(model)}: allocatable and free GPUs over time`} />
            <p class="alt">
              {points.length} points: free now {free[free.length - 1] ?? "—"}, least {Math.min(...free)}, most {Math.max(...free)}; allocatable now{" "}
              {points[points.length - 1]?.allocatable ?? "—"}.
            </p>
          </div>
        );
      })}
    </section>
  );
}
