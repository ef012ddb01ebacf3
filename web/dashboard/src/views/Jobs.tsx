import { useEffect, useMemo, useState } from "preact/hooks";
import { Alert, usePaged, Pager, Status, firstRender } from "../paging";
import type { Federation, Job, WorkloadPage } from "../types";
import { get, type Page } from "../api";
import { age } from "../format";
import { Chart, StageTable, timelineOptions } from "../chart";
import { useLive } from "../live";
import { Link } from "../router";

// QueuePlace is "2 of 5" and who is ahead: up to five workloads from the head of the queue.
function QueuePlace({ place }: { place: NonNullable<Job["queuePlace"]> }) {
  const more = place.position - 1 - place.first.length;
  return (
    <>
      <span class="position">
        {place.position} of {place.pending}
      </span>
      {place.first.length > 0 && (
        <ol class="ahead" aria-label="ahead of it, the head of the queue first">
          {place.first.map((w) => (
            <li key={`${w.namespace}/${w.name}`}>
              {w.namespace}/{w.name}
              {w.priority !== 0 ? ` (priority ${w.priority})` : ""}
            </li>
          ))}
          {more > 0 && <li class="more">and {more} more</li>}
        </ol>
      )}
    </>
  );
}

type JobsPage = Page<Job> & { served: boolean; message?: string; federations: Federation[] };

export function Jobs() {
  const p = usePaged<Job, JobsPage>("/api/jobs", "jobs", {}, () => firstRender("jobs"));
  return (
    <section aria-labelledby="jobs-h">
      <h2 id="jobs-h">Jobs</h2>
      <Status p={p} />
      {p.data && !p.data.served && <p>{p.data.message}</p>}
      {p.data && p.data.served && (
        <table>
          <caption>Kueue workloads on the hub: queue, place among its ClusterQueue's pending workloads and who is ahead, state, the worker they run on, and their timeline</caption>
          <thead>
            <tr>
              <th scope="col">Workload</th>
              <th scope="col">Queue</th>
              <th scope="col">Position</th>
              <th scope="col">Quota reserved</th>
              <th scope="col">Admitted</th>
              <th scope="col">Finished</th>
              <th scope="col">Worker</th>
              <th scope="col">Reason</th>
              <th scope="col">Age</th>
              <th scope="col">Timeline</th>
            </tr>
          </thead>
          <tbody>
            {p.data.items.map((j) => (
              <tr key={`${j.namespace}/${j.name}`}>
                <th scope="row">
                  <Link href={`/jobs/${encodeURIComponent(j.namespace)}/${encodeURIComponent(j.name)}`}>
                    {j.namespace}/{j.name}
                  </Link>
                </th>
                <td>
                  {j.queue ?? ""}
                  {j.clusterQueue ? ` → ${j.clusterQueue}` : ""}
                </td>
                <td>{j.queuePlace && <QueuePlace place={j.queuePlace} />}</td>
                <td>{j.quotaReserved ?? ""}</td>
                <td>{j.admitted ?? ""}</td>
                <td>{j.finished ?? ""}</td>
                <td>{j.clusterName ?? (j.nominatedClusterNames ?? []).join(", ")}</td>
                <td>{j.message ?? ""}</td>
                <td>{age(j.ageSeconds)}</td>
                <td>
                  <ol class="timeline">
                    {j.timeline.map((t) => (
                      <li key={t.type}>
                        <time dateTime={t.time}>{t.time}</time> {t.type}={t.status}
                        {t.reason ? ` (${t.reason})` : ""}
                      </li>
                    ))}
                  </ol>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {p.data && p.data.federations.length > 0 && (
        <table>
          <caption>Federated-learning runs</caption>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Phase</th>
              <th scope="col">Round</th>
              <th scope="col">Clients</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {p.data.federations.map((f) => (
              <tr key={`${f.namespace}/${f.name}`}>
                <th scope="row">
                  {f.namespace}/{f.name}
                </th>
                <td>{f.phase}</td>
                <td>
                  <progress max={f.rounds || 1} value={f.round} aria-label={`round ${f.round} of ${f.rounds}`} /> {f.round}/{f.rounds}
                </td>
                <td>{f.clients}</td>
                <td>{f.message ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager p={p} label="Workloads" />
    </section>
  );
}

// The stages of a workload, top to bottom in the order a workload meets them; the chart's rows.
const workloadStages: { stage: string; label: string }[] = [
  { stage: "submitted", label: "submitted" },
  { stage: "quota-reserved", label: "quota reserved" },
  { stage: "admission-check", label: "admission check" },
  { stage: "admitted", label: "admitted on a worker" },
  { stage: "running", label: "running (pods ready)" },
  { stage: "preempted", label: "preempted" },
  { stage: "evicted", label: "evicted" },
  { stage: "requeued", label: "requeued" },
  { stage: "finished", label: "finished" },
];

// JobPage is one workload's page: its life drawn as a timeline from the Workload's own
// timestamps (Kueue keeps the last change of each condition), updated live.
export function JobPage({ namespace, name }: { namespace: string; name: string }) {
  const [data, setData] = useState<WorkloadPage>();
  const [error, setError] = useState<string>();
  const tick = useLive("jobs", namespace);
  useEffect(() => {
    let live = true;
    get<WorkloadPage>(`/api/jobs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`)
      .then((d) => {
        if (!live) return;
        setData(d);
        setError(undefined);
        firstRender("job");
      })
      .catch((e: Error) => live && setError(e.message));
    return () => {
      live = false;
    };
  }, [namespace, name, tick]);
  const options = useMemo(() => (data ? timelineOptions(workloadStages, data.events) : undefined), [data]);
  return (
    <section aria-labelledby="job-h">
      <h2 id="job-h">
        Workload {namespace}/{name}
      </h2>
      <p>
        <Link href="/jobs">All workloads</Link> · <Link href="/queues">Queues</Link>
      </p>
      <Alert error={error} />
      {data && (
        <>
          <p>
            Queue {data.queue ?? "none"}
            {data.clusterQueue ? ` → ${data.clusterQueue}` : ""}; {data.podSets.map((p) => `${p.count} pods of ${p.name}`).join(", ")}
            {data.clusterName ? `; runs on worker ${data.clusterName}` : ""}
            {!data.clusterName && data.nominatedClusterNames?.length ? `; nominated: ${data.nominatedClusterNames.join(", ")}` : ""}.
          </p>
          {options && <Chart options={options} label={`${namespace}/${name}: its life stage by stage, from the Workload's own timestamps`} />}
          <StageTable stages={workloadStages} events={data.events} />
        </>
      )}
    </section>
  );
}
