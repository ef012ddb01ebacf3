import { usePaged, Pager, Status, firstRender } from "../paging";
import type { ClusterGPUs, ModelTotal } from "../types";
import type { Page } from "../api";
import { statusClass } from "../format";

type GPUPage = Page<ClusterGPUs> & { models: ModelTotal[] };

export function GPUs() {
  const p = usePaged<ClusterGPUs, GPUPage>("/api/gpus", "gpus", {}, () => firstRender("gpus"));
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
                  <th scope="row">{m.model || "(unnamed)"}</th>
                  <td>{m.clusters}</td>
                  <td>{m.allocatable}</td>
                  <td>{m.free}</td>
                  <td>{m.mostFreeOnANode}</td>
                  <td>{m.clustersWithCurrentFigures}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <table>
            <caption>Per cluster and model: allocatable, used, free, and the largest free block on one node</caption>
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
                          {c.cluster} <span class={statusClass(c.available)}>({c.available})</span>
                        </th>
                      ) : null}
                      <td>{m.model || "(unnamed)"}</td>
                      <td>{m.allocatable}</td>
                      <td>{f ? f.requested : "—"}</td>
                      <td>{f ? f.free : "—"}</td>
                      <td>{f ? f.mostFreeOnANode : "—"}</td>
                      <td>{f ? f.freeNodes.map((n) => `${n.nodes}×≥${n.free}`).join(", ") : "—"}</td>
                      <td>
                        {c.usage === "current" ? "current" : c.usage === "expired" ? <strong>expired{c.validUntil ? ` (valid until ${c.validUntil})` : ""}</strong> : "none: enable resource-usage"}
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
