import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import "./style.css";
import { get } from "./api";
import { Link, usePath } from "./router";
import { ClusterPage, Fleet } from "./views/Fleet";
import { GPUCluster, GPUs } from "./views/GPUs";
import { PlacementDetail, Placements } from "./views/Placements";
import { Works } from "./views/Works";
import { Addons } from "./views/Addons";
import { JobPage, Jobs } from "./views/Jobs";
import { Queues } from "./views/Queues";
import { Policies, PolicyOnCluster } from "./views/Policies";

const views = [
  { path: "/fleet", label: "Fleet" },
  { path: "/gpus", label: "GPUs" },
  { path: "/placements", label: "Placements" },
  { path: "/works", label: "Works" },
  { path: "/addons", label: "Add-ons" },
  { path: "/jobs", label: "Jobs" },
  { path: "/queues", label: "Queues" },
  { path: "/policies", label: "Policies" },
];

interface Whoami {
  user: string;
  tokenLogin: boolean;
}

function Page({ path }: { path: string }) {
  const parts = path.split("/").filter(Boolean);
  switch (parts[0] ?? "fleet") {
    case "fleet":
      return parts.length === 2 ? <ClusterPage name={decodeURIComponent(parts[1] ?? "")} /> : <Fleet />;
    case "gpus":
      return parts.length === 2 ? <GPUCluster name={decodeURIComponent(parts[1] ?? "")} /> : <GPUs />;
    case "placements":
      return parts.length === 3 ? <PlacementDetail namespace={parts[1] ?? ""} name={parts[2] ?? ""} /> : <Placements />;
    case "works":
      return <Works />;
    case "addons":
      return <Addons />;
    case "jobs":
      return parts.length === 3 ? <JobPage namespace={decodeURIComponent(parts[1] ?? "")} name={decodeURIComponent(parts[2] ?? "")} /> : <Jobs />;
    case "queues":
      return <Queues />;
    case "policies":
      return parts.length === 4 ? <PolicyOnCluster namespace={parts[1] ?? ""} name={parts[2] ?? ""} cluster={parts[3] ?? ""} /> : <Policies />;
  }
  return <p role="alert">No page {path}: pick a view above.</p>;
}

function App() {
  const path = usePath();
  const [me, setMe] = useState<Whoami>();
  useEffect(() => {
    get<Whoami>("/api/whoami")
      .then(setMe)
      .catch(() => setMe(undefined));
  }, []);
  const current = "/" + (path.split("/").filter(Boolean)[0] ?? "fleet");
  useEffect(() => {
    const v = views.find((x) => x.path === current);
    document.title = `${v ? v.label : "Flotilla"} · Flotilla dashboard`;
  }, [current]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <h1>Flotilla</h1>
        <nav aria-label="Views">
          <ul>
            {views.map((v) => (
              <li key={v.path}>
                <Link href={v.path} current={v.path === current}>
                  {v.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="me">
          {me ? `Signed in as ${me.user}` : ""}
          {me?.tokenLogin && (
            <form method="post" action="/logout">
              <button type="submit">Log out</button>
            </form>
          )}
        </div>
      </header>
      <main id="main">
        <Page path={path} />
      </main>
    </>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
