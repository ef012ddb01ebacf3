import { usePaged, Pager, Status, firstRender } from "../paging";
import type { AddOn } from "../types";
import { statusClass } from "../format";

export function Addons() {
  const p = usePaged<AddOn>("/api/addons", "addons", {}, () => firstRender("addons"));
  return (
    <section aria-labelledby="addons-h">
      <h2 id="addons-h">Add-ons</h2>
      <Status p={p} />
      {p.data && (
        <table>
          <caption>Add-ons installed on each cluster</caption>
          <thead>
            <tr>
              <th scope="col">Cluster</th>
              <th scope="col">Add-on</th>
              <th scope="col">Available</th>
              <th scope="col">Degraded</th>
              <th scope="col">Progressing</th>
              <th scope="col">Health check</th>
              <th scope="col">Namespace</th>
              <th scope="col">Configs</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {p.data.items.map((a) => (
              <tr key={`${a.cluster}/${a.name}`}>
                <td>{a.cluster}</td>
                <th scope="row">{a.name}</th>
                <td class={statusClass(a.available)}>{a.available}</td>
                <td>{a.degraded ?? ""}</td>
                <td>{a.progressing ?? ""}</td>
                <td>{a.health ?? ""}</td>
                <td>{a.installNamespace ?? ""}</td>
                <td>{a.configs.join(", ")}</td>
                <td>{a.message ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager p={p} label="Add-ons" />
    </section>
  );
}
