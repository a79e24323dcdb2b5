import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { TimelineProps } from "./props";
import { describeTimeline, layoutTimeline, type Marker, type RequestMark, type TokenBar, type TimelineLayout } from "./timeline-layout";
import "./timeline.css";

/** Drawing sizes in svg units: the svg is laid out at its box's own width, so one unit is one CSS pixel and text keeps its size on a phone. */
const TOP = 22;
const LANE_H = 22;
const AXIS_H = 30;
const MARKER_LABEL_GAP = 70;
const hms = (iso: string) => iso.slice(11, 19);

/**
 * The session's story as a picture: access tokens as bars from issue to expiry, requests as marks
 * on them by outcome (shape and colour), clock moves, actions and fired rules as vertical markers.
 * The journal table says the same in rows; a mark chosen here (click, or Enter) picks that row.
 */
export function Timeline({ entries, marks, now, onSelect }: TimelineProps) {
  const box = useRef<HTMLDivElement>(null);
  const width = useBoxWidth(box);
  // One tab stop for all the marks (a session may have hundreds): the arrow keys move between them.
  const [active, setActive] = useState<string | undefined>();
  const layout = useMemo(() => layoutTimeline({ entries, marks, now, width }), [entries, marks, now, width]);
  const rows = Math.max(1, layout.lanes);
  const laneY = (lane: number) => TOP + lane * LANE_H + LANE_H / 2;
  const height = TOP + rows * LANE_H + AXIS_H;
  const ids = layout.requests.map((r) => r.id);
  const current = active !== undefined && ids.includes(active) ? active : ids.at(-1);
  const move = (from: string, key: string) => {
    const i = ids.indexOf(from);
    const to = key === "Home" ? 0 : key === "End" ? ids.length - 1 : key === "ArrowLeft" ? Math.max(0, i - 1) : Math.min(ids.length - 1, i + 1);
    const id = ids[to]!;
    setActive(id);
    box.current?.querySelector<SVGGElement>(`[data-request="${id}"]`)?.focus();
  };

  return (
    <section class="card timeline" aria-labelledby="timeline-h">
      <h2 id="timeline-h">Timeline</h2>
      <div class="timeline-scroll" ref={box}>
        {/* A group, not an img: an img's children are hidden from assistive tech, and the marks are buttons. */}
        {/* biome-ignore lint/a11y/useSemanticElements: an svg drawing cannot be a <fieldset>; the role names its group of marks */}
        <svg
          role="group"
          aria-label={describeTimeline(layout)}
          class="timeline-svg"
          viewBox={`0 0 ${layout.width} ${height}`}
          width={layout.width}
          height={height}
        >
          <Axis layout={layout} y={TOP + rows * LANE_H + 4} />
          {layout.noTokenLane !== null && (
            <g class="no-token-row">
              <line x1={0} x2={layout.width} y1={laneY(layout.noTokenLane)} y2={laneY(layout.noTokenLane)} />
              <text x={layout.width - 4} y={laneY(layout.noTokenLane) - 5} text-anchor="end">
                no token
              </text>
            </g>
          )}
          {layout.tokens.map((t) => (
            <Bar key={t.jti} bar={t} y={laneY(t.lane)} />
          ))}
          <Markers markers={layout.markers} top={TOP - 16} bottom={TOP + rows * LANE_H} width={layout.width} />
          {layout.requests.map((r) => (
            <RequestSymbol key={r.id} mark={r} y={laneY(r.lane)} onSelect={onSelect} tabStop={r.id === current} onFocus={setActive} onMove={move} />
          ))}
        </svg>
      </div>
      <Legend />
    </section>
  );
}

/** The box's width in CSS pixels, followed as it changes (a phone turned, the page's columns). */
function useBoxWidth(box: { current: HTMLElement | null }): number {
  const [width, setWidth] = useState(720);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => {
      const w = Math.floor(el.clientWidth);
      if (w > 0) setWidth(w);
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, [box]);
  return width;
}

function Bar({ bar, y }: { bar: TokenBar; y: number }) {
  const ended = bar.endedEarlyAt ? `; ${bar.endedWhy} at ${hms(bar.endedEarlyAt)}` : "";
  const issued = bar.issuedAt ? `issued ${hms(bar.issuedAt)} by ${bar.issuedBy}` : "issued outside this journal (first used here)";
  const expires = bar.expiresAt ? `, expires ${hms(bar.expiresAt)}` : "";
  const classes = ["token-bar", bar.issuedAt ? "" : "unknown-issue", bar.endedWhy ? "ended-early" : ""].filter(Boolean).join(" ");
  return (
    <g class={classes} data-token={bar.jti} data-ended={bar.endedWhy}>
      <title>{`Token ${bar.jti}: ${issued}${expires}${ended}`}</title>
      <rect class="bar-body" x={bar.x1} y={y - 5} width={Math.max(2, bar.x2 - bar.x1)} height={10} rx={3} />
      {bar.endedWhy && <path class="bar-cut" d={`M${bar.x2 - 5},${y - 9} L${bar.x2 + 5},${y + 9} M${bar.x2 + 5},${y - 9} L${bar.x2 - 5},${y + 9}`} />}
      {bar.openEnd && <path class="bar-more" d={`M${bar.x2 - 6},${y - 6} L${bar.x2},${y} L${bar.x2 - 6},${y + 6}`} />}
    </g>
  );
}

/** A request: circle when answered, triangle when refused, square when it failed, so colour is never the only sign. */
function RequestSymbol({
  mark,
  y,
  onSelect,
  tabStop,
  onFocus,
  onMove,
}: {
  mark: RequestMark;
  y: number;
  onSelect: TimelineProps["onSelect"];
  tabStop: boolean;
  onFocus: (id: string) => void;
  onMove: (from: string, key: string) => void;
}) {
  const what = `${mark.id} ${hms(mark.at)} ${mark.method} ${mark.path} → ${mark.status}${mark.code ? ` ${mark.code}` : ""}`;
  const rule = mark.rules.length ? ` · rule ${mark.rules.join(", ")}` : "";
  const token = mark.token ? ` · token ${mark.token}${mark.afterEnd ? " (after its end)" : ""}` : " · no token";
  const choose = () => onSelect?.(mark.id);
  const { x } = mark;
  return (
    // biome-ignore lint/a11y/useSemanticElements: an svg shape cannot be an HTML <button>; role and keys make it one
    <g
      class={`request-mark outcome-${mark.outcome}${mark.afterEnd ? " after-end" : ""}`}
      data-request={mark.id}
      data-outcome={mark.outcome}
      role="button"
      aria-label={what + rule + token}
      tabindex={tabStop ? 0 : -1}
      onClick={choose}
      onFocus={() => onFocus(mark.id)}
      onKeyDown={(e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          choose();
        } else if (["ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) {
          e.preventDefault();
          onMove(mark.id, e.key);
        }
      }}
    >
      <title>{what + rule + token}</title>
      <circle class="hit" cx={x} cy={y} r={10} />
      <circle class="focus-ring" cx={x} cy={y} r={9} />
      {mark.outcome === "ok" && <circle class="shape" cx={x} cy={y} r={4.5} />}
      {mark.outcome === "refused" && <path class="shape" d={`M${x},${y - 6} L${x + 5.5},${y + 4.5} L${x - 5.5},${y + 4.5} Z`} />}
      {mark.outcome === "error" && <rect class="shape" x={x - 4.5} y={y - 4.5} width={9} height={9} />}
    </g>
  );
}

/** Vertical lines; a label only where it does not run into the previous one (the title always says it). */
function Markers({ markers, top, bottom, width }: { markers: Marker[]; top: number; bottom: number; width: number }) {
  let lastLabelX = Number.NEGATIVE_INFINITY;
  return (
    <g>
      {markers.map((m) => {
        const showLabel = m.x - lastLabelX >= MARKER_LABEL_GAP;
        if (showLabel) lastLabelX = m.x;
        const short =
          m.kind === "rule"
            ? `◆ ${m.label
                .split(", ")
                .map((r) => r.slice(r.lastIndexOf("/") + 1))
                .join(", ")}`
            : m.label;
        const what = m.kind === "clock" ? "Clock moved" : m.kind === "actions" ? "Actions ran" : `Rule fired on ${m.request}`;
        return (
          <g key={`${m.kind} ${m.at} ${m.label} ${m.request ?? ""}`} class={`marker marker-${m.kind}`}>
            <title>{`${what} at ${hms(m.at)}: ${m.label}`}</title>
            <line x1={m.x} x2={m.x} y1={top + 4} y2={bottom} />
            {showLabel && (
              // Near the right edge the label goes to the line's left, so it is not cut.
              <text x={m.x > width - MARKER_LABEL_GAP ? m.x - 3 : m.x + 3} y={top + 8} text-anchor={m.x > width - MARKER_LABEL_GAP ? "end" : "start"}>
                {short.length > 18 ? `${short.slice(0, 17)}…` : short}
              </text>
            )}
          </g>
        );
      })}
    </g>
  );
}

function Axis({ layout, y }: { layout: TimelineLayout; y: number }) {
  return (
    <g class="axis">
      <line x1={0} x2={layout.width} y1={y} y2={y} />
      {layout.breaks.map((b) => {
        const mid = (b.x1 + b.x2) / 2;
        return (
          <g key={b.x1} class="axis-break">
            <title>{`${b.label} with nothing in it, drawn shorter`}</title>
            <path d={`M${mid - 6},${y + 5} L${mid - 2},${y - 5} M${mid + 2},${y + 5} L${mid + 6},${y - 5}`} />
            {b.x2 - b.x1 >= 40 && (
              <text x={mid} y={y - 8} text-anchor="middle">
                {b.label}
              </text>
            )}
          </g>
        );
      })}
      {layout.ticks.map((t) => (
        <g key={t.x}>
          <line x1={t.x} x2={t.x} y1={y} y2={y + 5} />
          {/* The first and last labels lean inwards, so the edges do not cut them. */}
          <text x={t.x} y={y + 17} text-anchor={t.x < 30 ? "start" : t.x > layout.width - 30 ? "end" : "middle"}>
            {t.label}
          </text>
        </g>
      ))}
    </g>
  );
}

function Legend() {
  return (
    <ul class="timeline-legend">
      <li>
        <span class="key key-bar" aria-hidden="true" /> access token, issue to expiry (▸ still valid)
      </li>
      <li>
        <span class="key key-cut" aria-hidden="true">
          ✕
        </span>{" "}
        revoked or expired early
      </li>
      <li>
        <span class="key outcome-ok" aria-hidden="true">
          ●
        </span>{" "}
        answered
      </li>
      <li>
        <span class="key outcome-refused" aria-hidden="true">
          ▲
        </span>{" "}
        refused (4xx)
      </li>
      <li>
        <span class="key outcome-error" aria-hidden="true">
          ■
        </span>{" "}
        failed (5xx, dropped)
      </li>
      <li>
        <span class="key key-clock" aria-hidden="true">
          ┆
        </span>{" "}
        clock move / action / ◆ rule fired
      </li>
      <li>
        <span class="key" aria-hidden="true">
          {"//"}
        </span>{" "}
        a quiet stretch drawn shorter, its length written above
      </li>
      <li>Time on the session clock (UTC). Choose a mark (Enter; the arrow keys move between marks) to show its journal row.</li>
    </ul>
  );
}
