import { useState } from "preact/hooks";
import { usePaged, Pager, Status, firstRender } from "../paging";
import type { Work, WorkReplicaSet } from "../types";
import { statusClass } from "../format";

export function Works() {
  const [ns, setNs] = useState("");
  const [applied, setApplied] = useState("");
  const sets = usePaged<WorkReplicaSet>("/api/workreplicasets", "works", { namespace: applied || undefined });
  const p = usePaged<Work>("/api/works", "works", { namespace: applied || undefined }, () => firstRender("works"));
  return (
    <section aria-labelledby="works-h">
      <h2 id="works-h">Works and rollouts</h2>
      <form
        class="filter"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(ns);
        }}
      >
        <label for="works-ns">Cluster namespace (empty: every namespace you may read)</label>
        <input id="works-ns" value={ns} onInput={(e) => setNs(e.currentTarget.value)} />
        <button type="submit">Show</button>
      </form>
      <h3>ManifestWorkReplicaSets</h3>
      <Status p={sets} />
      {sets.data && (
        <table>
          <caption>Rollouts: template → placements → works, and their progress</caption>
          <thead>
            <tr>
              <th scope="col">Replica set</th>
              <th scope="col">Placements</th>
              <th scope="col">Works</th>
              <th scope="col">Applied</th>
              <th scope="col">Available</th>
              <th scope="col">Degraded</th>
            </tr>
          </thead>
          <tbody>
            {sets.data.items.map((s) => (
              <tr key={`${s.namespace}/${s.name}`}>
                <th scope="row">
                  {s.namespace}/{s.name}
                </th>
                <td>{s.placements.map((pl) => `${pl.name ?? ""} (${pl.summary.available}/${pl.summary.total} available)`).join(", ")}</td>
                <td>{s.summary.total}</td>
                <td>{s.summary.applied}</td>
                <td>{s.summary.available}</td>
                <td>{s.summary.degraded}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>ManifestWorks</h3>
      <Status p={p} />
      {p.data && (
        <table>
          <caption>ManifestWorks by cluster and name, as each cluster's agent reports them</caption>
          <thead>
            <tr>
              <th scope="col">Cluster</th>
              <th scope="col">Work</th>
              <th scope="col">Applied</th>
              <th scope="col">Available</th>
              <th scope="col">Manifests applied / available</th>
              <th scope="col">Replica set</th>
              <th scope="col">Feedback</th>
              <th scope="col">Problems</th>
            </tr>
          </thead>
          <tbody>
            {p.data.items.map((w) => (
              <tr key={`${w.cluster}/${w.name}`} data-work={`${w.cluster}/${w.name}`}>
                <td>{w.cluster}</td>
                <th scope="row">{w.name}</th>
                <td class={statusClass(w.applied)}>{w.applied}</td>
                <td class={statusClass(w.available)}>{w.available}</td>
                <td>
                  {w.manifestsApplied}/{w.manifestsAvailable} of {w.manifests}
                </td>
                <td>{w.replicaSet ?? ""}</td>
                <td>{w.feedback.join("; ")}</td>
                <td>{(w.problems ?? []).join("; ")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager p={p} label="Works" />
    </section>
  );
}
