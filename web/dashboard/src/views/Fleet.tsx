import { Alert, usePaged, Pager, Status, firstRender } from "../paging";
import type { Cluster, Timeline } from "../types";
import { age, pairs, statusClass } from "../format";
import { useEffect, useMemo, useState } from "preact/hooks";
import { get } from "../api";
import { useLive } from "../live";
import { Link } from "../router";
import { Chart, StageTable, timelineOptions } from "../chart";

export function Fleet() {
  const [selector, setSelector] = useState("");
  const [applied, setApplied] = useState("");
  const p = usePaged<Cluster>("/api/clusters", "fleet", { labelSelector: applied || undefined }, () => firstRender("fleet"));
  return (
    <section aria-labelledby="fleet-h">
      <h2 id="fleet-h">Fleet</h2>
      <form
        class="filter"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(selector);
        }}
      >
        <label for="fleet-selector">Label selector</label>
        <input id="fleet-selector" value={selector} onInput={(e) => setSelector(e.currentTarget.value)} placeholder="region=us-east,gpu" />
        <button type="submit">Filter</button>
      </form>
      <Status p={p} />
      {p.data && (
        <table>
          <caption>Managed clusters, by name</caption>
          <thead>
            <tr>
              <th scope="col">Cluster</th>
              <th scope="col">Available</th>
              <th scope="col">Heartbeat</th>
              <th scope="col">Taints</th>
              <th scope="col">Sets</th>
              <th scope="col">Labels</th>
              <th scope="col">Claims</th>
              <th scope="col">GPUs</th>
              <th scope="col">Version</th>
            </tr>
          </thead>
          <tbody>
            {p.data.items.map((c) => (
              <tr key={c.name} data-cluster={c.name}>
                <th scope="row">
                  <Link href={`/fleet/${encodeURIComponent(c.name)}`}>{c.name}</Link>
                </th>
                <td class={statusClass(c.available)} title={c.availableMessage}>
                  {c.available}
                  {c.accepted ? "" : " (not accepted)"}
                  {c.availableForSeconds !== undefined ? ` for ${age(c.availableForSeconds)}` : ""}
                </td>
                <td>{c.leaseRenewedSecondsAgo !== undefined ? `${age(c.leaseRenewedSecondsAgo)} ago` : "none"}</td>
                <td>{c.taints.map((t) => `${t.key}${t.value ? "=" + t.value : ""}:${t.effect}`).join(", ")}</td>
                <td>{c.sets.join(", ")}</td>
                <td class="labels">{pairs(c.labels)}</td>
                <td class="labels">{pairs(c.claims)}</td>
                <td>{pairs(c.gpus)}</td>
                <td>{c.kubernetesVersion ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager p={p} label="Clusters" />
    </section>
  );
}

// The stages of a loss, top to bottom in the order they happen; the chart's rows.
const stages: { stage: string; label: string }[] = [
  { stage: "heartbeat", label: "last heartbeat" },
  { stage: "fence", label: "fence raised" },
  { stage: "tainted", label: "tainted" },
  { stage: "available", label: "Available changed" },
  { stage: "lost", label: "declared lost" },
  { stage: "moved", label: "workload elsewhere" },
  { stage: "reported", label: "fence reported" },
];

// ClusterPage is one cluster's page: its last loss drawn as a timeline (last heartbeat, fence,
// taint, declared lost, each requeued workload admitted elsewhere, the agent's report, heal), from
// the objects' own timestamps, updated live.
export function ClusterPage({ name }: { name: string }) {
  const [data, setData] = useState<Timeline>();
  const [error, setError] = useState<string>();
  const tick = useLive("timeline");
  useEffect(() => {
    let live = true;
    get<Timeline>(`/api/clusters/${encodeURIComponent(name)}/timeline`)
      .then((d) => {
        if (!live) return;
        setData(d);
        setError(undefined);
        firstRender("cluster");
      })
      .catch((e: Error) => live && setError(e.message));
    return () => {
      live = false;
    };
  }, [name, tick]);
  const options = useMemo(() => (data && data.events.length > 0 ? timelineOptions(stages, data.events) : undefined), [data]);
  return (
    <section aria-labelledby="cluster-h">
      <h2 id="cluster-h">Cluster {name}</h2>
      <p>
        <Link href="/fleet">All clusters</Link>
      </p>
      <Alert error={error} />
      {data && (
        <>
          <h3>Timeline{data.epoch > 0 ? ` (epoch ${data.epoch}: declared lost ${data.epoch === 1 ? "once" : `${data.epoch} times`})` : ""}</h3>
          {options ? <Chart options={options} label={`${name}: its last loss, stage by stage, from the objects' own timestamps`} /> : <p>Nothing recorded.</p>}
          {data.notes && data.notes.length > 0 && (
            <ul class="notes">
              {data.notes.map((n) => (
                <li key={n}>{n}</li>
              ))}
            </ul>
          )}
          <StageTable stages={stages} events={data.events} />
        </>
      )}
    </section>
  );
}
