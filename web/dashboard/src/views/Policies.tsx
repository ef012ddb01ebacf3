import { usePaged, Pager, Status, firstRender } from "../paging";
import type { Policy } from "../types";

// Compliance as text, a symbol and a class: colour is never the only cue.
function compliance(state?: string): { text: string; symbol: string; cls: string } {
  switch (state) {
    case "Compliant":
      return { text: "Compliant", symbol: "✓", cls: "ok" };
    case "NonCompliant":
      return { text: "NonCompliant", symbol: "✗", cls: "bad" };
    case "Pending":
      return { text: "Pending", symbol: "…", cls: "unknown" };
  }
  return { text: "Not reported", symbol: "?", cls: "unknown" };
}

// The policy × cluster grid: a row per root policy, a column per cluster any policy of the page is
// placed on; a cell says the cluster's compliance, and an empty cell that the policy is not placed there.
export function Policies() {
  const p = usePaged<Policy>("/api/policies", "policies", {}, () => firstRender("policies"));
  const clusters = p.data ? [...new Set(p.data.items.flatMap((x) => x.clusters.map((c) => c.cluster)))].sort() : [];
  return (
    <section aria-labelledby="policies-h">
      <h2 id="policies-h">Policies</h2>
      <Status p={p} />
      {p.data && (
        <table class="grid">
          <caption>
            Compliance of each policy on each cluster it is placed on (✓ compliant, ✗ not compliant, … pending, ? not reported; empty: not
            placed). `flotilla describe policy NAME -n NAMESPACE` shows each cluster's latest message.
          </caption>
          <thead>
            <tr>
              <th scope="col">Policy</th>
              <th scope="col">Remediation</th>
              <th scope="col">Compliance</th>
              {clusters.map((c) => (
                <th scope="col" key={c}>
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {p.data.items.map((x) => {
              const overall = x.disabled ? { text: "Disabled", symbol: "–", cls: "unknown" } : compliance(x.compliant);
              const byCluster = new Map(x.clusters.map((c) => [c.cluster, c.compliant]));
              return (
                <tr key={`${x.namespace}/${x.name}`} data-policy={`${x.namespace}/${x.name}`}>
                  <th scope="row">
                    {x.namespace}/{x.name}
                  </th>
                  <td>{x.remediation ?? ""}</td>
                  <td class={overall.cls}>{overall.text}</td>
                  {clusters.map((c) => {
                    if (!byCluster.has(c)) return <td key={c} data-cluster={c} />;
                    const s = compliance(byCluster.get(c));
                    return (
                      <td key={c} data-cluster={c} class={`cell ${s.cls}`} title={`${x.name} on ${c}: ${s.text}`}>
                        <span aria-hidden="true">{s.symbol} </span>
                        {s.text}
                      </td>
                    );
                  })}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <Pager p={p} label="Policies" />
    </section>
  );
}
