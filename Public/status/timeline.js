// The window timeline of one channel, as SVG: one lane per rendition (its listed segments by
// kind, discontinuities, ad markers), the channel's ad breaks above the lanes (aired, planned,
// early return), stalls as bands across the lanes, the live edge and "now". The x axis is seconds
// before the instant the server answered (`generatedAt`).

import { h, s } from "./dom.js";
import { seconds, clock } from "./format.js";

const MARKER_LABEL = {
  "cue-out": "ad break starts (CUE-OUT)",
  "cue-in": "ad break ends (CUE-IN)",
  "cue-out-cont": "inside an ad break (CUE-OUT-CONT)",
  "daterange": "EXT-X-DATERANGE",
};

/** Filler kinds: what a stalled channel lists instead of source media. */
const FILLER = new Set(["slate", "gap"]);

export function listedSeconds(rendition) {
  return rendition.segments.reduce((sum, segment) => sum + segment.duration, 0);
}

export function kindCounts(rendition) {
  const counts = { content: 0, slate: 0, gap: 0 };
  for (const segment of rendition.segments) counts[segment.kind] = (counts[segment.kind] || 0) + 1;
  return counts;
}

/** Seconds of filler (slate, gap) listed after the rendition's newest source segment. */
function trailingFiller(rendition) {
  let total = 0;
  for (let i = rendition.segments.length - 1; i >= 0 && FILLER.has(rendition.segments[i].kind); i -= 1) {
    total += rendition.segments[i].duration;
  }
  return total;
}

/** Where a lane ends, in seconds before now. Source media ends when it arrived
 *  (`lastSegmentAt`). Filler is listed on the server's clock while the stall lasts: the first
 *  piece when the stall is detected (`startedAt`), then one each time the previous one's duration
 *  has passed, so the newest was listed less than one filler ago; the earliest may have slid out
 *  of the window already. A rendition padded alone (a per-rendition stall) is padded up to the
 *  MSNs the others list: it ends where they do. */
function laneEndAge(rendition, now, stalls, othersEnd) {
  const filler = trailingFiller(rendition);
  const ongoing = stalls.find((stall) => stall.endedAt == null && (stall.rendition == null || stall.rendition === rendition.name));
  if (filler > 0 && ongoing) {
    if (ongoing.rendition != null && othersEnd != null) return othersEnd;
    const last = rendition.segments[rendition.segments.length - 1].duration || 1;
    return Math.max(0, (now - ongoing.startedAt) / 1e6) % last;
  }
  if (rendition.lastSegmentAt == null) return 0;
  return Math.max(0, (now - rendition.lastSegmentAt) / 1e6 - filler);
}

function segmentTitle(rendition, segment) {
  const parts = [`${rendition.name} · MSN ${segment.msn}`, `${segment.duration.toFixed(3)} s`, segment.kind];
  if (segment.discontinuity) parts.push("discontinuity before");
  if (segment.marker) parts.push(MARKER_LABEL[segment.marker] || segment.marker);
  return parts.join(" · ");
}

function tickStep(span) {
  for (const step of [2, 5, 10, 15, 30, 60, 120, 300]) if (span / step <= 8) return step;
  return 600;
}

/** The breaks as the timeline draws them, in seconds before now: `start`, `plannedEnd` and
 *  `end` (where it ended, or the live edge while it lasts). `positions` maps an MSN to where its
 *  segment starts; a break that started before the window is placed by the target duration. */
function placeBreaks(breaks, positions, targetDuration, liveEdge) {
  const known = [...positions.keys()];
  if (known.length === 0) return [];
  const first = Math.min(...known);
  return breaks.map((adBreak) => {
    const start = positions.has(adBreak.startMediaSequence)
      ? positions.get(adBreak.startMediaSequence)
      : positions.get(first) + Math.max(0, first - adBreak.startMediaSequence) * targetDuration;
    const ongoing = adBreak.durationSeconds == null;
    let end = liveEdge;
    if (!ongoing) {
      end = positions.has(adBreak.endMediaSequence)
        ? positions.get(adBreak.endMediaSequence)
        : start - adBreak.durationSeconds;
    }
    return { adBreak, start, end, plannedEnd: start - adBreak.plannedDurationSeconds, ongoing };
  });
}

function breakTitle(adBreak, placed) {
  const parts = [`Ad break ${adBreak.id}`, `from MSN ${adBreak.startMediaSequence}`, `started ${clock(adBreak.startedAt)}`,
    `planned ${seconds(adBreak.plannedDurationSeconds, 1)}`];
  if (placed.ongoing) {
    parts.push(placed.plannedEnd < 0 ? `on air, planned end in ${seconds(-placed.plannedEnd, 1)}` : "on air, past its planned end");
  } else {
    parts.push(`aired ${seconds(adBreak.durationSeconds, 1)}`);
    if (adBreak.endedEarly) parts.push(`early return, ${seconds(adBreak.plannedDurationSeconds - adBreak.durationSeconds, 1)} before its planned end`);
  }
  return parts.join(" · ");
}

/** The text equivalent of the picture. */
function timelineDescription(channel) {
  const status = channel.status;
  const lines = status.renditions.map((rendition) => {
    const segments = rendition.segments;
    if (segments.length === 0) return `${rendition.name}: no segments listed.`;
    const counts = kindCounts(rendition);
    const discontinuities = segments.filter((segment) => segment.discontinuity).map((segment) => segment.msn);
    const markers = segments.filter((segment) => segment.marker && segment.marker !== "cue-out-cont")
      .map((segment) => `${segment.marker} at ${segment.msn}`);
    let text = `${rendition.name}: MSN ${segments[0].msn} to ${segments[segments.length - 1].msn}, `
      + `${segments.length} segments (${counts.content} content, ${counts.slate} slate, ${counts.gap} gap), `
      + `${listedSeconds(rendition).toFixed(1)} s`;
    text += discontinuities.length ? `; discontinuities before ${discontinuities.join(", ")}` : "; no discontinuity";
    if (markers.length) text += `; ad markers: ${markers.join(", ")}`;
    return `${text}.`;
  });
  const breaks = (channel.breaks || []).map((adBreak) => adBreak.durationSeconds == null
    ? `ad break ${adBreak.id} on air since MSN ${adBreak.startMediaSequence}, planned ${adBreak.plannedDurationSeconds} s`
    : `ad break ${adBreak.id} from MSN ${adBreak.startMediaSequence}, planned ${adBreak.plannedDurationSeconds} s, aired ${adBreak.durationSeconds} s${adBreak.endedEarly ? " (early return)" : ""}`);
  const stalls = status.stalls.filter((stall) => stall.endedAt == null)
    .map((stall) => `stall of ${stall.rendition || "all renditions"} ongoing, filled with ${stall.fill}`);
  const extra = [...breaks, ...stalls];
  return `Window of channel ${channel.name}, oldest segment left, live edge right. ${lines.join(" ")}`
    + (extra.length ? ` ${extra.join("; ")}.` : "");
}

export function timeline(channel, generatedAt, index, width) {
  const status = channel.status;
  const renditions = status.renditions;
  const targetDuration = status.targetDuration || 1;
  const window = status.windowSeconds || 30;
  const now = generatedAt * 1000; // µs
  const hasAds = Array.isArray(channel.breaks);

  // Renditions not padded alone end where their media does; one padded alone ends with them.
  const alone = (rendition) => status.stalls.some((stall) => stall.endedAt == null && stall.rendition === rendition.name);
  const othersEnds = renditions.filter((rendition) => !alone(rendition)).map((rendition) => laneEndAge(rendition, now, status.stalls, null));
  const othersEnd = othersEnds.length ? Math.min(...othersEnds) : null;
  const lanes = renditions.map((rendition) => {
    const total = listedSeconds(rendition);
    const filler = trailingFiller(rendition);
    // A long source silence is drawn at most one window wide so the segments stay readable.
    const end = Math.min(laneEndAge(rendition, now, status.stalls, othersEnd), window);
    const hasSource = rendition.segments.some((segment) => !FILLER.has(segment.kind));
    return { rendition, total, end, filler, sourceEnd: hasSource ? end + filler : null };
  });
  const span = Math.max(window + 2 * targetDuration, ...lanes.map((lane) => lane.total + lane.end), 1);

  const LEFT = 92, RIGHT = 44, LANE = 22, STEP = 46, ADS = 14;
  const adsY = 24;
  const TOP = hasAds ? adsY + ADS + 20 : 30;
  const lanesBottom = TOP + (lanes.length - 1) * STEP + LANE;
  const notesY = lanesBottom + 27; // stall and source labels, between the MSN labels and the axis
  const axisY = lanesBottom + 44; // baseline of the time labels
  const height = axisY + 6;
  const plotLeft = LEFT, plotRight = width - RIGHT;
  const scale = (plotRight - plotLeft) / span;
  const x = (age) => plotRight - Math.min(age, span) * scale;

  const id = `timeline-${index}`;
  const svg = s("svg", {
    class: "timeline", id, width, height, viewBox: `0 0 ${width} ${height}`,
    role: "img", "aria-labelledby": `${id}-title ${id}-desc`,
  });
  svg.append(
    s("title", { id: `${id}-title` }, `Timeline of channel ${channel.name}`),
    s("desc", { id: `${id}-desc` }, timelineDescription(channel)),
    s("defs", {},
      s("pattern", { id: `${id}-gap`, width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
        s("rect", { width: 6, height: 6, class: "pattern-gap-bg" }),
        s("rect", { width: 2, height: 6, class: "pattern-gap-line" })),
      s("pattern", { id: `${id}-slate`, width: 8, height: 8, patternUnits: "userSpaceOnUse", patternTransform: "rotate(-45)" },
        s("rect", { width: 8, height: 8, class: "pattern-slate-bg" }),
        s("rect", { width: 3, height: 8, class: "pattern-slate-line" })),
      s("pattern", { id: `${id}-planned`, width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
        s("rect", { width: 6, height: 6, class: "pattern-planned-bg" }),
        s("rect", { width: 1.5, height: 6, class: "pattern-planned-line" }))),
  );

  svg.append(s("text", { x: 0, y: 12, class: "heading" }, "WINDOW TIMELINE"));

  // Grid and time axis: seconds before now.
  const grid = s("g", { class: "grid", "aria-hidden": "true" });
  const step = tickStep(span);
  for (let t = step; t <= span; t += step) {
    const tx = x(t);
    if (tx < plotLeft) break;
    grid.append(
      s("line", { x1: tx, x2: tx, y1: TOP - 6, y2: lanesBottom + 20, class: "gridline" }),
      s("text", { x: tx, y: axisY, class: "axis-label", "text-anchor": "middle" }, `−${t} s`),
    );
  }
  svg.append(grid);

  // Stalls, behind the lanes: from when each was detected to when it ended, or to now.
  const stallBands = s("g", { class: "stalls" });
  for (const stall of status.stalls) {
    const startAge = (now - stall.startedAt) / 1e6;
    const endAge = stall.endedAt == null ? 0 : Math.max(0, (now - stall.endedAt) / 1e6);
    if (endAge >= span || startAge <= endAge) continue;
    const laneIndex = stall.rendition == null ? -1 : lanes.findIndex((lane) => lane.rendition.name === stall.rendition);
    const y1 = laneIndex < 0 ? TOP - 4 : TOP + laneIndex * STEP - 4;
    const y2 = laneIndex < 0 ? lanesBottom + 4 : TOP + laneIndex * STEP + LANE + 4;
    const left = x(startAge), right = x(endAge);
    const ongoing = stall.endedAt == null;
    const lasted = ((stall.endedAt == null ? now : stall.endedAt) - stall.startedAt) / 1e6;
    const title = `Stall of ${stall.rendition || "all renditions"} since ${clock(stall.startedAt)}`
      + `${ongoing ? ", ongoing" : `, ended ${clock(stall.endedAt)}`} (${seconds(lasted, 1)}), filled with ${stall.fill}`;
    stallBands.append(s("g", { class: `stall-band${ongoing ? " ongoing" : ""}`, "data-stall": ongoing ? "ongoing" : "ended" },
      s("rect", { x: left.toFixed(2), y: y1, width: Math.max(1, right - left).toFixed(2), height: y2 - y1, rx: 3 }),
      // An ongoing stall's label at its right (now), clear of the source marker at its left.
      right - left > 140 ? s("text", { x: ongoing ? right - 4 : left + 4, y: notesY, "text-anchor": ongoing ? "end" : "start" },
        `stall · ${stall.fill}${ongoing ? " · ongoing" : ""}`) : null,
      s("title", {}, title)));
  }
  svg.append(stallBands);

  const marks = s("g", { class: "marks" });
  /** Where each MSN's segment starts, in seconds before now (the first lane listing it). */
  const positions = new Map();
  lanes.forEach((lane, laneIndex) => {
    const { rendition, total, end } = lane;
    const y = TOP + laneIndex * STEP;
    const group = s("g", { class: "lane", "data-rendition": rendition.name });
    group.append(
      s("text", { x: plotLeft - 12, y: y + LANE / 2 + 4, class: "lane-label", "text-anchor": "end" }, rendition.name),
      s("rect", { x: plotLeft, y, width: plotRight - plotLeft, height: LANE, rx: 3, class: "lane-bg" }),
    );
    const segments = rendition.segments;
    if (segments.length === 0) {
      group.append(s("text", { x: (plotLeft + plotRight) / 2, y: y + LANE / 2 + 4, class: "lane-empty", "text-anchor": "middle" }, "no segments listed"));
    }
    let age = end + total;
    for (const segment of segments) {
      if (!positions.has(segment.msn)) positions.set(segment.msn, age);
      const left = x(age);
      const segmentWidth = Math.max(1, segment.duration * scale - 1.5);
      const fill = segment.kind === "gap" ? `url(#${id}-gap)` : segment.kind === "slate" ? `url(#${id}-slate)` : null;
      group.append(s("rect", {
        x: left.toFixed(2), y, width: segmentWidth.toFixed(2), height: LANE, rx: 2,
        class: `segment segment-${segment.kind}`, fill,
        "data-msn": segment.msn, "data-kind": segment.kind,
      }, s("title", {}, segmentTitle(rendition, segment))));
      if (segment.marker === "cue-out-cont") {
        marks.append(s("rect", { x: left.toFixed(2), y: y - 4, width: segmentWidth.toFixed(2), height: 3, class: "cue cue-cont" },
          s("title", {}, `${rendition.name} · MSN ${segment.msn} · ${MARKER_LABEL["cue-out-cont"]}`)));
      } else if (segment.marker) {
        const cx = left - 0.75;
        const shape = segment.marker === "daterange"
          ? `M${cx} ${y - 10} l4 4 l-4 4 l-4 -4 z`
          : `M${cx - 5} ${y - 10} h10 l-5 8 z`;
        marks.append(s("path", { d: shape, class: `cue cue-${segment.marker}`, "data-msn": segment.msn },
          s("title", {}, `${rendition.name} · MSN ${segment.msn} · ${MARKER_LABEL[segment.marker] || segment.marker}`)));
      }
      if (segment.discontinuity) {
        const dx = (left - 0.75).toFixed(2);
        marks.append(s("line", {
          x1: dx, x2: dx, y1: y - 3, y2: y + LANE + 3, class: "discontinuity", "data-msn": segment.msn,
        }, s("title", {}, `${rendition.name} · discontinuity before MSN ${segment.msn}`)));
      }
      age -= segment.duration;
    }
    if (segments.length > 0) {
      const labelY = y + LANE + 12;
      group.append(
        s("text", { x: x(end + total), y: labelY, class: "msn msn-first", "text-anchor": "start" }, `#${segments[0].msn}`),
        s("text", { x: x(end), y: labelY, class: "msn msn-last", "text-anchor": "end" }, `#${segments[segments.length - 1].msn}`),
      );
    }
    svg.append(group);
  });
  svg.append(marks);

  // The live edge: the newest listed segment of any rendition, filler included.
  const liveEdge = lanes.length ? Math.min(...lanes.map((lane) => lane.end)) : 0;
  if (hasAds) svg.append(adBreakRow(channel, { id, positions, targetDuration, liveEdge, x, span, plotLeft, plotRight, adsY, ADS, TOP, lanesBottom }));

  const bottom = lanesBottom + 20;
  if (channel.liveEdgeAgeSeconds != null && lanes.length) {
    const ex = x(liveEdge);
    svg.append(s("g", { class: "live-edge" },
      s("line", { x1: ex, x2: ex, y1: 14, y2: bottom }),
      s("text", { x: ex - 4, y: 12, "text-anchor": "end" }, "live edge"),
      s("title", {}, `Live edge: newest listed segment ${seconds(liveEdge)} ago; newest source segment ${seconds(channel.liveEdgeAgeSeconds)} ago`)));
    // While filler is listed, the source's newest segment is behind the live edge: mark it where
    // its segment ends in the lanes, or at the left edge once only filler is listed.
    if (lanes.some((lane) => lane.filler > 0)) {
      const ends = lanes.map((lane) => lane.sourceEnd).filter((end) => end != null);
      const sourceAge = ends.length ? Math.max(...ends) : span;
      const sx = x(sourceAge);
      const label = `${ends.length ? "" : "← "}source last seen ${seconds(channel.liveEdgeAgeSeconds, 1)} ago`;
      // Written to the left of the line when it fits there, else to its right.
      const left = sx - plotLeft > label.length * 6.2 + 8;
      svg.append(s("g", { class: "source-edge" },
        s("line", { x1: sx, x2: sx, y1: TOP - 6, y2: bottom }),
        s("text", { x: left ? sx - 4 : sx + 4, y: notesY, "text-anchor": left ? "end" : "start" }, label),
        s("title", {}, `The source's newest segment arrived ${seconds(channel.liveEdgeAgeSeconds)} ago; filler is listed since`)));
    }
  }
  svg.append(s("g", { class: "now" },
    s("line", { x1: plotRight, x2: plotRight, y1: 4, y2: bottom }),
    s("text", { x: plotRight + 5, y: 12, "text-anchor": "start" }, "now"),
    s("text", { x: plotRight, y: axisY, "text-anchor": "middle", class: "axis-label" }, "0 s"),
    s("title", {}, `Now: ${clock(now)}`)));
  return svg;
}

/** The row of ad breaks above the lanes: the planned extent hatched, what aired solid, an early
 *  return marked where the content came back, and a faint band down across the lanes. */
function adBreakRow(channel, layout) {
  const { id, positions, targetDuration, liveEdge, x, span, plotLeft, plotRight, adsY, ADS, TOP, lanesBottom } = layout;
  const row = s("g", { class: "ad-breaks" });
  row.append(
    s("text", { x: plotLeft - 12, y: adsY + ADS - 3, class: "lane-label row-label", "text-anchor": "end" }, "ad breaks"),
    s("rect", { x: plotLeft, y: adsY, width: plotRight - plotLeft, height: ADS, rx: 3, class: "lane-bg" }));
  const placed = placeBreaks(channel.breaks, positions, targetDuration, liveEdge);
  for (const item of placed) {
    const { adBreak, start, end, plannedEnd, ongoing } = item;
    if (Math.min(end, plannedEnd) >= span && end >= span) continue; // ended before the window
    const title = s("title", {}, breakTitle(adBreak, item));
    const x0 = x(start), x1 = x(end), xp = x(Math.max(0, plannedEnd));
    const state = ongoing ? "on-air" : adBreak.endedEarly ? "early" : "ended";
    const group = s("g", { class: `ad-break ad-break-${state}`, "data-break": adBreak.id, "data-break-state": state });
    // Across the lanes: where the break is in the content.
    group.append(s("rect", { x: x0.toFixed(2), y: TOP - 4, width: Math.max(1, x1 - x0).toFixed(2), height: lanesBottom - TOP + 8, class: "break-band" }));
    // The planned extent (hatched), then what aired (solid) over it.
    group.append(s("rect", { x: x0.toFixed(2), y: adsY, width: Math.max(1, xp - x0).toFixed(2), height: ADS, rx: 2, class: "break-planned", fill: `url(#${id}-planned)` }));
    group.append(s("rect", { x: x0.toFixed(2), y: adsY, width: Math.max(1, x1 - x0).toFixed(2), height: ADS, rx: 2, class: "break-aired" }, title));
    // Start: a flag; planned end: a tick; early return: a marker where the content came back.
    group.append(s("path", { d: `M${x0.toFixed(2)} ${adsY - 4} v${ADS + 8}`, class: "break-start" }, s("title", {}, `${adBreak.id} starts at MSN ${adBreak.startMediaSequence}`)));
    if (plannedEnd > 0 || !ongoing) {
      group.append(s("path", { d: `M${xp.toFixed(2)} ${adsY - 4} v${ADS + 8}`, class: "break-planned-end" }, s("title", {}, `${adBreak.id}: planned end`)));
    }
    const label = ongoing ? `on air · ${Math.round(start - end)}/${Math.round(adBreak.plannedDurationSeconds)} s`
      : `aired ${Math.round(adBreak.durationSeconds)} s${adBreak.endedEarly ? ` of ${Math.round(adBreak.plannedDurationSeconds)}` : ""}`;
    if (x1 - x0 > label.length * 6 + 8) {
      group.append(s("text", { x: x0 + 5, y: adsY + ADS - 3.5, class: "break-label" }, label));
    }
    if (adBreak.endedEarly) {
      group.append(s("path", { d: `M${x1.toFixed(2)} ${adsY - 5} l5 ${ADS / 2 + 5} l-5 ${ADS / 2 + 5} l-5 ${-(ADS / 2 + 5)} z`, class: "break-early-return" },
        s("title", {}, `${adBreak.id}: early return, ${seconds(adBreak.plannedDurationSeconds - adBreak.durationSeconds, 1)} before its planned end`)));
      if (xp - x1 > 78) group.append(s("text", { x: x1 + 8, y: adsY + ADS - 3.5, class: "break-early-label" }, "early return"));
    }
    if (ongoing && plannedEnd < 0) {
      group.append(s("text", { x: plotRight + 5, y: adsY + ADS - 3, class: "break-remaining", "text-anchor": "start" }, `+${Math.ceil(-plannedEnd)} s`,
        s("title", {}, `planned end in ${seconds(-plannedEnd, 1)}`)));
    }
    row.append(group);
  }
  return row;
}

export function legend(hasAds) {
  const swatch = (kind, label) => h("li", {},
    h("span", { class: `swatch swatch-${kind}`, "aria-hidden": "true" }), label);
  return h("ul", { class: "legend", "aria-label": "Legend" },
    swatch("content", "content"), swatch("slate", "slate"), swatch("gap", "gap (EXT-X-GAP)"),
    swatch("discontinuity", "discontinuity"), swatch("cue-out", "cue-out"), swatch("cue-in", "cue-in"),
    swatch("cue-cont", "in break"), swatch("daterange", "date range"),
    hasAds ? [swatch("break-aired", "ad break aired"), swatch("break-planned", "planned"), swatch("break-early", "early return")] : null,
    swatch("stall", "stall"), swatch("live-edge", "live edge"));
}
