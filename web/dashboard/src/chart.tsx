import * as Plot from "@observablehq/plot";
import { useEffect, useRef, useState } from "preact/hooks";

// Chart draws one Observable Plot figure (an SVG) and redraws it when options change. Plot draws
// nothing a keyboard can reach, so marks with className "focusable" get their elements made
// focusable, each named by its aria-label, and the figures of the focused one are written under
// the chart, as hovering shows them in a tooltip. Every chart also has a table or text beside it.
export function Chart({ options, label }: { options: Plot.PlotOptions; label: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const [focused, setFocused] = useState<string>();
  useEffect(() => {
    const el = Plot.plot({ ...options, ariaLabel: label });
    // Plot labels each mark's <g> ("bar", "line"); ARIA allows a label on a group, not on a
    // bare <g>, so they are made groups.
    el.querySelectorAll("g[aria-label]:not([role])").forEach((g) => g.setAttribute("role", "group"));
    el.querySelectorAll(".focusable > *").forEach((e) => {
      e.setAttribute("tabindex", "0");
      e.setAttribute("role", "img");
    });
    ref.current?.replaceChildren(el);
    return () => el.remove();
  }, [options, label]);
  return (
    <figure class="chart">
      <div
        ref={ref}
        onFocusIn={(e) => setFocused((e.target as Element).getAttribute("aria-label") ?? undefined)}
        onFocusOut={() => setFocused(undefined)}
      />
      <figcaption aria-live="polite">{focused ?? label}</figcaption>
    </figure>
  );
}

// Swatch is a legend entry: a sample of a mark's style and its name in words, so that no state is
// told by colour alone.
export function Swatch({ class: cls, children }: { class: string; children: string }) {
  return (
    <span class="swatch">
      <svg width="14" height="14" aria-hidden="true">
        <rect class={cls} x="1" y="1" width="12" height="12" />
      </svg>
      {children}
    </span>
  );
}

// timelineOptions draws moments on a time axis, a row per stage (stages top to bottom, in the
// order they happen), each moment a focusable dot named by its time and text.
export function timelineOptions(stages: { stage: string; label: string }[], events: { time: string; stage: string; text: string }[]): Plot.PlotOptions {
  const label = (s: string) => stages.find((x) => x.stage === s)?.label ?? s;
  const rows = events.map((e) => ({ ...e, at: new Date(e.time), row: label(e.stage) }));
  return {
    height: 60 + 30 * stages.length,
    marginLeft: 150,
    marginRight: 40,
    x: { type: "time", label: null, grid: true },
    y: { label: null, domain: stages.map((s) => s.label) },
    marks: [
      Plot.ruleY(stages.map((s) => s.label), { stroke: "#e0e0e0" }),
      Plot.dot(rows, { x: "at", y: "row", r: 6, fill: "#1f3a5f", stroke: "#ffffff", title: (e: { time: string; text: string }) => `${e.time}: ${e.text}` }),
      Plot.dot(rows, { x: "at", y: "row", r: 8, className: "focusable", fillOpacity: 0, pointerEvents: "none", ariaLabel: (e: { time: string; text: string }) => `${e.time}: ${e.text}` }),
    ],
  };
}

// StageTable is a timeline's text alternative: its moments, oldest first, each row marked with
// its stage (data-stage).
export function StageTable({ stages, events }: { stages: { stage: string; label: string }[]; events: { time: string; stage: string; text: string }[] }) {
  return (
    <table>
      <caption>The same, oldest first</caption>
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Stage</th>
          <th scope="col">What</th>
        </tr>
      </thead>
      <tbody>
        {events.map((e, i) => (
          <tr key={i} data-stage={e.stage}>
            <td>
              <time dateTime={e.time}>{e.time}</time>
            </td>
            <td>{stages.find((s) => s.stage === e.stage)?.label ?? e.stage}</td>
            <td>{e.text}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
