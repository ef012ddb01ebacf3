import * as Plot from "@observablehq/plot";
import { useEffect, useMemo, useState } from "preact/hooks";
import { Chart, Swatch } from "../chart";
import { Alert, usePaged, Pager, Status, firstRender } from "../paging";
import type { ClusterOutput, Explanation, Output, Placement } from "../types";
import { get, post } from "../api";
import { useLive } from "../live";
import { statusClass } from "../format";
import { Link } from "../router";

export function Placements() {
  const p = usePaged<Placement>("/api/placements", "placements", {}, () => firstRender("placements"));
  return (
    <section aria-labelledby="placements-h">
      <h2 id="placements-h">Placements</h2>
      <Status p={p} />
      {p.data && (
        <table>
          <caption>Placements, by namespace and name, with the clusters they selected</caption>
          <thead>
            <tr>
              <th scope="col">Placement</th>
              <th scope="col">Selected</th>
              <th scope="col">Decisions</th>
              <th scope="col">Conditions</th>
            </tr>
          </thead>
          <tbody>
            {p.data.items.map((pl) => (
              <tr key={`${pl.namespace}/${pl.name}`} data-placement={`${pl.namespace}/${pl.name}`}>
                <th scope="row">
                  <Link href={`/placements/${pl.namespace}/${pl.name}`}>
                    {pl.namespace}/{pl.name}
                  </Link>
                </th>
                <td>
                  {pl.selected}
                  {pl.numberOfClusters !== undefined && pl.numberOfClusters !== null ? ` of ${pl.numberOfClusters}` : ""}
                </td>
                <td class="decisions">{pl.decisions.map((d) => d.cluster).join(", ")}</td>
                <td>
                  {pl.conditions.map((c) => (
                    <span key={c.type} class={statusClass(c.status)} title={c.message}>
                      {c.type}={c.status}{" "}
                    </span>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager p={p} label="Placements" />
    </section>
  );
}

export function ExplainTable({ out, caption }: { out: Output; caption: string }) {
  return (
    <table class="explain">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Cluster</th>
          <th scope="col">Result</th>
          <th scope="col">Why</th>
          <th scope="col">Scores (prioritizer × weight)</th>
          <th scope="col">Total</th>
        </tr>
      </thead>
      <tbody>
        {out.clusters.map((c) => (
          <tr key={c.name} data-cluster={c.name}>
            <th scope="row">{c.name}</th>
            <td class={c.selected ? "ok" : c.filteredBy ? "bad" : "unknown"}>
              {c.selected ? "selected" : c.filteredBy ? `filtered by ${c.filteredBy}` : "not chosen"}
            </td>
            <td>{c.message}</td>
            <td>{c.scores.map((s) => `${s.prioritizer} ${s.score}×${s.weight}${s.detail ? ` (${s.detail})` : ""}`).join(", ")}</td>
            <td>{c.totalScore}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

// Distinct in lightness as well as hue, so that neighbouring prioritizers differ in grey too; each
// segment is also named in its tooltip and the table below.
const prioritizerColors = ["#08306b", "#9ecae1", "#2b7bba", "#deebf7", "#4a1486", "#c7a5e0", "#7f2704", "#fdae6b"];

function scoreLabel(c: ClusterOutput): string {
  const parts = c.scores.map((s) => `${s.prioritizer} ${s.score}×${s.weight}`).join(", ");
  return `${c.name}: total ${c.totalScore}${c.selected ? ", selected" : ", not chosen"}${parts ? ` (${parts})` : ""}`;
}

// scoreOptions draws each cluster that passed the filters as a bar of its prioritizers' score ×
// weight, stacked (negative ones to the left of zero), with its total and whether it was chosen.
function scoreOptions(out: Output): Plot.PlotOptions {
  const ranked = out.clusters.filter((c) => !c.filteredBy);
  const rowOf = (c: ClusterOutput) => `${c.selected ? "✓ " : ""}${c.name}`;
  const segments = ranked.flatMap((c) =>
    c.scores.map((s) => ({ row: rowOf(c), prioritizer: s.prioritizer, value: s.score * s.weight, title: `${c.name}: ${s.prioritizer} ${s.score} × weight ${s.weight}${s.detail ? ` (${s.detail})` : ""}` })),
  );
  const rows = ranked.map(rowOf);
  const prioritizers = [...new Set(segments.map((s) => s.prioritizer))];
  return {
    height: 50 + 26 * rows.length,
    marginLeft: Math.min(360, 16 + 7 * Math.max(8, ...rows.map((r) => r.length))),
    marginRight: 60,
    x: { label: "score × weight", grid: true },
    y: { label: null, domain: rows, padding: 0.2 },
    color: { domain: prioritizers, range: prioritizerColors },
    marks: [
      Plot.barX(segments, { x: "value", y: "row", fill: "prioritizer", stroke: "#ffffff", title: "title" }),
      Plot.ruleX([0]),
      Plot.tickX(ranked, { x: "totalScore", y: rowOf, stroke: "#c2410c", strokeWidth: 3, ariaHidden: "true" }),
      Plot.text(ranked, { x: "totalScore", y: rowOf, text: (c: ClusterOutput) => `= ${c.totalScore}`, textAnchor: "start", dx: 6, ariaHidden: "true" }),
      Plot.barX(ranked, { x1: 0, x2: "totalScore", y: rowOf, className: "focusable", fillOpacity: 0, pointerEvents: "none", ariaLabel: scoreLabel }),
    ],
  };
}

function ScoreChart({ out, what }: { out: Output; what: string }) {
  const options = useMemo(() => scoreOptions(out), [out]);
  const prioritizers = [...new Set(out.clusters.flatMap((c) => c.scores.map((s) => s.prioritizer)))];
  if (!out.clusters.some((c) => !c.filteredBy)) return <p>No cluster passed the filters{what}.</p>;
  return (
    <>
      <p class="legend">
        {prioritizers.map((p, i) => (
          <span class="swatch" key={p}>
            <svg width="14" height="14" aria-hidden="true">
              <rect x="1" y="1" width="12" height="12" fill={prioritizerColors[i % prioritizerColors.length]} stroke="#1a1a1a" />
            </svg>
            {p}
          </span>
        ))}
        <span>✓ selected; the orange tick is the total</span>
      </p>
      <Chart options={options} label={`Each cluster's score per prioritizer${what}; filtered clusters are in the table`} />
    </>
  );
}

// compareOptions draws, per cluster, its total now and in the what-if, filled when selected and
// outlined when not; a cluster filtered out says so in words.
function compareOptions(now: Output, then: Output): Plot.PlotOptions {
  const names = [...new Set([...now.clusters.map((c) => c.name), ...then.clusters.map((c) => c.name)])].sort();
  const data = names.flatMap((name) =>
    (
      [
        ["now", now],
        ["what if", then],
      ] as const
    ).map(([which, out]) => {
      const c = out.clusters.find((x) => x.name === name);
      const state = !c ? "absent" : c.selected ? "selected" : c.filteredBy ? `filtered by ${c.filteredBy}` : "not chosen";
      const total = c && !c.filteredBy ? c.totalScore : 0;
      return { row: `${name} · ${which}`, total, selected: !!c?.selected, state, text: `${name}, ${which}: ${state}${c && !c.filteredBy ? `, total ${c.totalScore}` : ""}` };
    }),
  );
  const rows = data.map((d) => d.row);
  return {
    height: 50 + 22 * rows.length,
    marginLeft: Math.min(360, 16 + 7 * Math.max(8, ...rows.map((r) => r.length))),
    marginRight: 160,
    x: { label: "total score", grid: true },
    y: { label: null, domain: rows, padding: 0.15 },
    marks: [
      Plot.barX(data.filter((d) => d.selected), { x1: 0, x2: "total", y: "row", className: "sel" }),
      Plot.barX(data.filter((d) => !d.selected), { x1: 0, x2: "total", y: "row", className: "not-sel" }),
      Plot.ruleX([0]),
      Plot.text(data, { x: "total", y: "row", text: "state", textAnchor: "start", dx: 6, ariaHidden: "true" }),
      Plot.barX(data, { x1: 0, x2: "total", y: "row", className: "focusable", fillOpacity: 0, pointerEvents: "none", ariaLabel: "text" }),
    ],
  };
}

function CompareChart({ now, then }: { now: Output; then: Output }) {
  const options = useMemo(() => compareOptions(now, then), [now, then]);
  return (
    <>
      <p class="legend">
        <Swatch class="sel">selected</Swatch> <Swatch class="not-sel">not chosen</Swatch>
      </p>
      <Chart options={options} label="Each cluster now and in the what-if: total score, and whether it is selected" />
    </>
  );
}

export function PlacementDetail({ namespace, name }: { namespace: string; name: string }) {
  const [data, setData] = useState<Explanation>();
  const [error, setError] = useState<string>();
  const [draft, setDraft] = useState<string>();
  const [whatIf, setWhatIf] = useState<Output>();
  const [whatIfError, setWhatIfError] = useState<string>();
  const tick = useLive("placements", namespace);
  useEffect(() => {
    get<Explanation>(`/api/placements/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`)
      .then((d) => {
        setData(d);
        setError(undefined);
        setDraft((cur) => cur ?? d.placement);
        firstRender("placement");
      })
      .catch((e: Error) => setError(e.message));
  }, [namespace, name, tick]);
  const simulate = (e: Event) => {
    e.preventDefault();
    post<Explanation>(`/api/placements/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/simulate`, draft ?? "")
      .then((d) => {
        setWhatIf(d.explanation);
        setWhatIfError(undefined);
      })
      .catch((err: Error) => {
        setWhatIf(undefined);
        setWhatIfError(err.message);
      });
  };
  const now = new Set(data?.explanation.decisions.map((d) => d.clusterName));
  const then = new Set(whatIf?.decisions.map((d) => d.clusterName));
  return (
    <section aria-labelledby="placement-h">
      <h2 id="placement-h">
        Placement {namespace}/{name}
      </h2>
      <p>
        <Link href="/placements">All placements</Link>
      </p>
      <Alert error={error} />
      {data && (
        <>
          <p>
            Selected now: <span class="decisions">{[...now].join(", ") || "none"}</span>
            {data.hub && (
              <>
                {" — "}the hub's decisions: <span class="hub-decisions">{data.hub.decisions.map((d) => d.cluster).join(", ") || "none"}</span>
              </>
            )}
          </p>
          <ScoreChart out={data.explanation} what="" />
          <ExplainTable out={data.explanation} caption="Why each cluster of the eligible sets was selected, filtered or not chosen (scheduled now, as flotilla explain placement does)" />
          <form onSubmit={simulate} class="whatif">
            <h3>What if</h3>
            <label for="whatif-yaml">Edit a copy of the placement (YAML) and simulate it against the fleet; nothing is created</label>
            <textarea id="whatif-yaml" rows={14} value={draft} onInput={(e) => setDraft(e.currentTarget.value)} spellcheck={false} />
            <button type="submit">Simulate</button>
          </form>
          <Alert error={whatIfError} />
          {whatIf && (
            <>
              <p>
                Would select: <span class="whatif-decisions">{[...then].join(", ") || "none"}</span>
                {" — "}added: {[...then].filter((c) => !now.has(c)).join(", ") || "none"}; removed:{" "}
                {[...now].filter((c) => !then.has(c)).join(", ") || "none"}
              </p>
              <CompareChart now={data.explanation} then={whatIf} />
              <ExplainTable out={whatIf} caption="What-if result" />
            </>
          )}
        </>
      )}
    </section>
  );
}
