import { usePaged, Pager, Status, firstRender } from "../paging";
import type { Cluster } from "../types";
import { age, pairs, statusClass } from "../format";
import { useState } from "preact/hooks";

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
                <th scope="row">{c.name}</th>
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
