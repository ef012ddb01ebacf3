import { useEffect, useState } from "preact/hooks";
import { Alert, usePaged, Pager, Status, firstRender } from "../paging";
import type { Policy, PolicyExplanation } from "../types";
import { get } from "../api";
import { useLive } from "../live";
import { Link } from "../router";

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
            placed). Open a cell for how the cluster differs from the policy, field by field.
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
                        <Link href={`/policies/${x.namespace}/${x.name}/${c}`}>
                          <span aria-hidden="true">{s.symbol} </span>
                          {s.text}
                        </Link>
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

// PolicyOnCluster is a grid cell opened: how one cluster stands with a policy, template by
// template, with the objects found not as specified and their differences field by field (what
// `flotilla explain policy NAMESPACE/NAME --cluster CLUSTER` prints).
export function PolicyOnCluster({ namespace, name, cluster }: { namespace: string; name: string; cluster: string }) {
  const [data, setData] = useState<PolicyExplanation>();
  const [error, setError] = useState<string>();
  const tick = useLive("policies");
  useEffect(() => {
    let live = true;
    get<PolicyExplanation>(`/api/policies/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/clusters/${encodeURIComponent(cluster)}`)
      .then((d) => {
        if (!live) return;
        setData(d);
        setError(undefined);
        firstRender("policy-cluster");
      })
      .catch((e: Error) => live && setError(e.message));
    return () => {
      live = false;
    };
  }, [namespace, name, cluster, tick]);
  const overall = compliance(data?.compliant);
  return (
    <section aria-labelledby="policy-cluster-h">
      <h2 id="policy-cluster-h">
        Policy {namespace}/{name} on {cluster}
      </h2>
      <p>
        <Link href="/policies">All policies</Link>
      </p>
      <Alert error={error} />
      {data && (
        <>
          <p class={`overall ${overall.cls}`}>
            <span aria-hidden="true">{overall.symbol} </span>
            {overall.text}
          </p>
          {data.templates.length === 0 && <p>The cluster has reported nothing for its templates yet.</p>}
          {data.templates.map((t) => {
            const s = compliance(t.compliant);
            return (
              <section key={t.name} class="template" data-template={t.name}>
                <h3>
                  Template {t.name}: <span class={s.cls}>{s.text}</span>
                </h3>
                {t.message && (
                  <p>
                    {t.message}
                    {t.messageTime ? ` (${t.messageTime})` : ""}
                  </p>
                )}
                {t.objects.length > 0 && (
                  <table>
                    <caption>Objects found not as specified, or missing</caption>
                    <thead>
                      <tr>
                        <th scope="col">Object</th>
                        <th scope="col">Compliance</th>
                        <th scope="col">Reason</th>
                        <th scope="col">Differences</th>
                      </tr>
                    </thead>
                    <tbody>
                      {t.objects.map((o) => (
                        <tr key={o.object} data-object={o.object}>
                          <th scope="row">{o.object}</th>
                          <td>{o.compliant ?? ""}</td>
                          <td>{o.reason ?? ""}</td>
                          <td>
                            {o.diff && o.diff.length > 0 ? (
                              <ul class="diff">
                                {o.diff.map((d) => (
                                  <li key={d}>{d}</li>
                                ))}
                              </ul>
                            ) : o.missing ? (
                              "the cluster has no such object"
                            ) : (
                              "no differences recorded (recordDiff None or Log, or a Secret)"
                            )}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
              </section>
            );
          })}
        </>
      )}
    </section>
  );
}
