import { useEffect, useState } from "preact/hooks";
import { usePaged, Pager, Status, firstRender } from "../paging";
import type { Explanation, Output, Placement } from "../types";
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
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
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
          <ExplainTable out={data.explanation} caption="Why each cluster of the eligible sets was selected, filtered or not chosen (scheduled now, as flotilla explain placement does)" />
          <form onSubmit={simulate} class="whatif">
            <h3>What if</h3>
            <label for="whatif-yaml">Edit a copy of the placement (YAML) and simulate it against the fleet; nothing is created</label>
            <textarea id="whatif-yaml" rows={14} value={draft} onInput={(e) => setDraft(e.currentTarget.value)} spellcheck={false} />
            <button type="submit">Simulate</button>
          </form>
          {whatIfError && (
            <p role="alert" class="error">
              {whatIfError}
            </p>
          )}
          {whatIf && (
            <>
              <p>
                Would select: <span class="whatif-decisions">{[...then].join(", ") || "none"}</span>
                {" — "}added: {[...then].filter((c) => !now.has(c)).join(", ") || "none"}; removed:{" "}
                {[...now].filter((c) => !then.has(c)).join(", ") || "none"}
              </p>
              <ExplainTable out={whatIf} caption="What-if result" />
            </>
          )}
        </>
      )}
    </section>
  );
}
