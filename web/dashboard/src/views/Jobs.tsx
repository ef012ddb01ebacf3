import { usePaged, Pager, Status, firstRender } from "../paging";
import type { Federation, Job } from "../types";
import type { Page } from "../api";
import { age } from "../format";

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
                  {j.namespace}/{j.name}
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
