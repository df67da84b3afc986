// Headwater status page: polls api/status every 2 s and draws one card per channel.
// Plain DOM, no dependencies, no inline styles (works behind a strict CSP), no external fetches.
"use strict";

(() => {
  const POLL_MS = 2000;
  const SVG_NS = "http://www.w3.org/2000/svg";
  /** Per channel: the previous poll's ingest counters, to compute a rate. */
  const previous = new Map();
  let lastDocument = null;
  let lastSuccess = 0;

  // MARK: - DOM helpers

  function setAttributes(element, attributes) {
    for (const [key, value] of Object.entries(attributes || {})) {
      if (value === undefined || value === null || value === false) continue;
      element.setAttribute(key, value === true ? "" : String(value));
    }
  }

  function appendChildren(element, children) {
    for (const child of children.flat(Infinity)) {
      if (child === undefined || child === null || child === false) continue;
      element.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }

  /** An HTML element. */
  function h(tag, attributes, ...children) {
    const element = document.createElement(tag);
    setAttributes(element, attributes);
    appendChildren(element, children);
    return element;
  }

  /** An SVG element. */
  function s(tag, attributes, ...children) {
    const element = document.createElementNS(SVG_NS, tag);
    setAttributes(element, attributes);
    appendChildren(element, children);
    return element;
  }

  // MARK: - Formatting

  const clockFormat = new Intl.DateTimeFormat(undefined, {
    hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false,
  });

  function seconds(value, digits = 2) {
    if (value === undefined || value === null || !isFinite(value)) return "—";
    if (value < 60) return `${value.toFixed(digits)} s`;
    return duration(value);
  }

  /** 75 → "1 min 15 s", 7300 → "2 h 1 min". */
  function duration(value) {
    const total = Math.max(0, Math.round(value));
    if (total < 60) return `${total} s`;
    const h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), sec = total % 60;
    if (h > 0) return `${h} h ${m} min`;
    return `${m} min ${sec} s`;
  }

  function bytes(value) {
    if (value < 1024) return `${value} B`;
    const units = ["KiB", "MiB", "GiB", "TiB"];
    let scaled = value / 1024, unit = 0;
    while (scaled >= 1024 && unit < units.length - 1) { scaled /= 1024; unit += 1; }
    return `${scaled.toFixed(scaled < 10 ? 2 : 1)} ${units[unit]}`;
  }

  function bitrate(bitsPerSecond) {
    if (bitsPerSecond < 1000) return `${bitsPerSecond.toFixed(0)} bit/s`;
    if (bitsPerSecond < 1e6) return `${(bitsPerSecond / 1e3).toFixed(1)} kbit/s`;
    return `${(bitsPerSecond / 1e6).toFixed(2)} Mbit/s`;
  }

  const number = new Intl.NumberFormat("en-US");

  function clock(microseconds) {
    return clockFormat.format(new Date(microseconds / 1000));
  }

  // MARK: - Derived figures

  /** How healthy a live-edge age is, relative to the target duration (RFC 8216 §6.2.2: a new
   *  segment at least every 1½ target durations). */
  function ageClass(age, targetDuration) {
    if (age === undefined || age === null) return "unknown";
    if (age <= 1.5 * targetDuration) return "ok";
    if (age <= 3 * targetDuration) return "warn";
    return "bad";
  }

  /** Bytes and segments per second since the previous poll, measured on the server's clock
   *  (`generatedAt`), so a slow or throttled page does not skew it. */
  function ingestRate(name, ingest, generatedAt) {
    const before = previous.get(name);
    let rate = before ? before.rate : null;
    if (before && generatedAt - before.at >= 1000) {
      const elapsed = (generatedAt - before.at) / 1000;
      const deltaBytes = ingest.bytes - before.bytes;
      const deltaSegments = ingest.segments - before.segments;
      // Counters only go back on a restart: start measuring again.
      rate = deltaBytes < 0 || deltaSegments < 0 ? null
        : { bitsPerSecond: (deltaBytes * 8) / elapsed, segmentsPerMinute: (deltaSegments * 60) / elapsed };
    }
    if (!before || generatedAt - before.at >= 1000) {
      previous.set(name, { at: generatedAt, bytes: ingest.bytes, segments: ingest.segments, rate });
    }
    return rate;
  }

  function listedSeconds(rendition) {
    return rendition.segments.reduce((sum, segment) => sum + segment.duration, 0);
  }

  function kindCounts(rendition) {
    const counts = { content: 0, slate: 0, gap: 0 };
    for (const segment of rendition.segments) counts[segment.kind] = (counts[segment.kind] || 0) + 1;
    return counts;
  }

  // MARK: - Timeline

  const MARKER_LABEL = {
    "cue-out": "ad break starts (CUE-OUT)",
    "cue-in": "ad break ends (CUE-IN)",
    "cue-out-cont": "inside an ad break (CUE-OUT-CONT)",
    "daterange": "EXT-X-DATERANGE",
  };

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
    return `Window of channel ${channel.name}, oldest segment left, live edge right. ${lines.join(" ")}`;
  }

  function timeline(channel, generatedAt, index, width) {
    const status = channel.status;
    const renditions = status.renditions;
    const targetDuration = status.targetDuration || 1;
    const window = status.windowSeconds || 30;
    const now = generatedAt * 1000; // µs

    const lanes = renditions.map((rendition) => {
      const total = listedSeconds(rendition);
      // Time since the lane's newest segment: the gap between its end and "now". A long stall
      // is drawn at most one window wide so the segments stay readable.
      const age = rendition.lastSegmentAt == null ? 0 : Math.max(0, (now - rendition.lastSegmentAt) / 1e6);
      return { rendition, total, gap: Math.min(age, window) };
    });
    const span = Math.max(window + 2 * targetDuration, ...lanes.map((lane) => lane.total + lane.gap), 1);

    const LEFT = 92, RIGHT = 44, TOP = 30, LANE = 22, STEP = 46;
    const lanesBottom = TOP + (lanes.length - 1) * STEP + LANE;
    const axisY = lanesBottom + 34; // baseline of the time labels, below the last lane's MSN labels
    const height = axisY + 6;
    const plotLeft = LEFT, plotRight = width - RIGHT;
    const scale = (plotRight - plotLeft) / span;
    const x = (age) => plotRight - age * scale;

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
          s("rect", { width: 3, height: 8, class: "pattern-slate-line" }))),
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

    const marks = s("g", { class: "marks" });
    lanes.forEach((lane, laneIndex) => {
      const { rendition, total, gap } = lane;
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
      let age = gap + total;
      for (const segment of segments) {
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
          s("text", { x: x(gap + total), y: labelY, class: "msn msn-first", "text-anchor": "start" }, `#${segments[0].msn}`),
          s("text", { x: x(gap), y: labelY, class: "msn msn-last", "text-anchor": "end" }, `#${segments[segments.length - 1].msn}`),
        );
      }
      svg.append(group);
    });
    svg.append(marks);

    // The live edge (newest segment of any rendition) and "now" at the right.
    const bottom = lanesBottom + 20;
    const edgeAge = channel.liveEdgeAgeSeconds;
    if (edgeAge !== undefined && edgeAge !== null) {
      const ex = x(Math.min(edgeAge, window));
      svg.append(s("g", { class: "live-edge" },
        s("line", { x1: ex, x2: ex, y1: 14, y2: bottom }),
        s("text", { x: ex - 4, y: 12, "text-anchor": "end" }, "live edge"),
        s("title", {}, `Live edge: newest segment ${seconds(edgeAge)} ago`)));
    }
    svg.append(s("g", { class: "now" },
      s("line", { x1: plotRight, x2: plotRight, y1: 4, y2: bottom }),
      s("text", { x: plotRight + 5, y: 12, "text-anchor": "start" }, "now"),
      s("text", { x: plotRight, y: axisY, "text-anchor": "middle", class: "axis-label" }, "0 s"),
      s("title", {}, `Now: ${clock(now)}`)));
    return svg;
  }

  function legend() {
    const swatch = (kind, label) => h("li", {},
      h("span", { class: `swatch swatch-${kind}`, "aria-hidden": "true" }), label);
    return h("ul", { class: "legend", "aria-label": "Legend" },
      swatch("content", "content"), swatch("slate", "slate"), swatch("gap", "gap (EXT-X-GAP)"),
      swatch("discontinuity", "discontinuity"), swatch("cue-out", "cue-out"), swatch("cue-in", "cue-in"),
      swatch("cue-cont", "in break"), swatch("daterange", "date range"), swatch("live-edge", "live edge"));
  }

  // MARK: - Channel card

  function stat(key, label, value, detail, extraClass) {
    return h("div", { class: `stat ${extraClass || ""}`.trim(), "data-stat": key },
      h("dt", {}, label), h("dd", {}, h("span", { class: "value" }, value), detail ? h("span", { class: "detail" }, detail) : null));
  }

  function renditionTable(status, generatedAt) {
    const rows = status.renditions.map((rendition) => {
      const counts = kindCounts(rendition);
      const extra = [counts.slate ? `${counts.slate} slate` : null, counts.gap ? `${counts.gap} gap` : null].filter(Boolean);
      const newest = rendition.lastSegmentAt == null ? "—" : seconds(Math.max(0, generatedAt / 1000 - rendition.lastSegmentAt / 1e6), 1);
      const segments = rendition.segments;
      return h("tr", { "data-rendition": rendition.name },
        h("th", { scope: "row" }, rendition.name),
        h("td", { class: "num" }, String(rendition.mediaSequence)),
        h("td", { class: "num" }, String(rendition.discontinuitySequence)),
        h("td", { class: "num" }, String(segments.length), extra.length ? h("span", { class: "muted" }, ` (${extra.join(", ")})`) : null),
        h("td", { class: "num" }, `${listedSeconds(rendition).toFixed(1)} s`),
        h("td", { class: "num" }, newest));
    });
    return h("table", { class: "renditions" },
      h("caption", {}, "Renditions"),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "Rendition"),
        h("th", { scope: "col", class: "num", title: "EXT-X-MEDIA-SEQUENCE" }, "Media seq."),
        h("th", { scope: "col", class: "num", title: "EXT-X-DISCONTINUITY-SEQUENCE" }, "Disc. seq."),
        h("th", { scope: "col", class: "num" }, "Segments"),
        h("th", { scope: "col", class: "num" }, "Listed"),
        h("th", { scope: "col", class: "num", title: "Time since the newest segment arrived" }, "Newest"))),
      h("tbody", {}, rows));
  }

  function ingestPanel(channel, generatedAt) {
    const ingest = channel.status.ingest;
    const rate = ingestRate(channel.name, ingest, generatedAt);
    const note = channel.status.source === "loop"
      ? "A loop channel plays a package from disk: nothing is ingested."
      : null;
    return h("section", { class: "panel ingest", "aria-label": "Ingest" },
      h("h3", {}, "Ingest"),
      h("dl", { class: "pairs" },
        h("div", {}, h("dt", {}, "Segments"), h("dd", { "data-ingest": "segments" }, number.format(ingest.segments))),
        h("div", {}, h("dt", {}, "Bytes"), h("dd", { "data-ingest": "bytes" }, bytes(ingest.bytes))),
        h("div", { class: ingest.rejected > 0 ? "warn" : "" }, h("dt", {}, "Rejected"), h("dd", { "data-ingest": "rejected" }, number.format(ingest.rejected))),
        h("div", {}, h("dt", {}, "Rate"), h("dd", { "data-ingest": "rate" },
          note ? "n/a" : rate ? `${bitrate(rate.bitsPerSecond)} · ${rate.segmentsPerMinute.toFixed(1)} seg/min` : "measuring…"))),
      note ? h("p", { class: "note" }, note) : null);
  }

  function stallPanel(status, generatedAt) {
    const stalls = status.stalls.slice().reverse();
    const shown = stalls.slice(0, 5);
    const body = shown.length === 0
      ? h("p", { class: "calm" }, h("span", { class: "check", "aria-hidden": "true" }, "✓"), " No stalls since the channel started.")
      : h("table", { class: "stalls" },
        h("thead", {}, h("tr", {},
          h("th", { scope: "col" }, "Started"), h("th", { scope: "col" }, "Ended"), h("th", { scope: "col", class: "num" }, "Lasted"),
          h("th", { scope: "col" }, "Scope"), h("th", { scope: "col" }, "Fill"))),
        h("tbody", {}, shown.map((stall) => {
          const end = stall.endedAt == null ? generatedAt * 1000 : stall.endedAt;
          return h("tr", { class: stall.endedAt == null ? "ongoing" : "" },
            h("td", {}, clock(stall.startedAt)),
            h("td", {}, stall.endedAt == null ? h("span", { class: "pill bad" }, "ongoing") : clock(stall.endedAt)),
            h("td", { class: "num" }, seconds((end - stall.startedAt) / 1e6, 1)),
            h("td", {}, stall.rendition || "all renditions"),
            h("td", {}, stall.fill));
        })));
    return h("section", { class: "panel stall-history", "aria-label": "Stall history" },
      h("h3", {}, "Stall history", stalls.length > shown.length ? h("span", { class: "muted" }, ` · latest ${shown.length} of ${stalls.length}`) : null),
      body);
  }

  function breakPanel(channel, generatedAt) {
    if (!channel.breaks) return null;
    const breaks = channel.breaks.slice().reverse();
    const shown = breaks.slice(0, 5);
    const body = shown.length === 0
      ? h("p", { class: "calm" }, "No ad break in the channel's recent history.")
      : h("table", { class: "stalls ad-breaks" },
        h("thead", {}, h("tr", {},
          h("th", { scope: "col" }, "Started"), h("th", { scope: "col", class: "num" }, "Planned"),
          h("th", { scope: "col", class: "num" }, "Lasted"), h("th", { scope: "col", class: "num" }, "Slots"))),
        h("tbody", {}, shown.map((adBreak) => {
          const ongoing = adBreak.durationSeconds == null;
          return h("tr", { title: `${adBreak.id} · MSN ${adBreak.startMediaSequence}` },
            h("td", {}, clock(adBreak.startedAt)),
            h("td", { class: "num" }, seconds(adBreak.plannedDurationSeconds, 1)),
            h("td", { class: "num" }, ongoing ? h("span", { class: "pill" }, "on air") : seconds(adBreak.durationSeconds, 1)),
            h("td", { class: "num" }, ongoing ? "…" : String(adBreak.endMediaSequence - adBreak.startMediaSequence)));
        })));
    return h("section", { class: "panel ad-break-history", "aria-label": "Ad breaks" },
      h("h3", {}, "Ad breaks", breaks.length > shown.length ? h("span", { class: "muted" }, ` · latest ${shown.length} of ${breaks.length}`) : null),
      body);
  }

  function channelCard(channel, generatedAt, index, width) {
    const status = channel.status;
    const nameId = `channel-${index}-name`;
    const card = h("section", {
      class: `channel state-${channel.state}`, "data-channel": channel.name, "aria-labelledby": nameId,
    });
    card.append(h("header", { class: "channel-head" },
      h("h2", { id: nameId }, channel.name),
      status ? h("span", { class: "badge", title: "source type" }, status.source) : null,
      h("span", { class: `state state-${channel.state}`, "data-state": channel.state },
        h("span", { class: "dot", "aria-hidden": "true" }), channel.state),
      channel.degradedReason ? h("span", { class: "reason" }, channel.degradedReason) : null));
    if (!status) {
      card.append(h("p", { class: "placeholder" }, "Waiting for the channel's first version."));
      return card;
    }

    const targetDuration = status.targetDuration;
    const edge = channel.liveEdgeAgeSeconds;
    const listed = status.renditions.length ? Math.max(...status.renditions.map(listedSeconds)) : 0;
    const segmentCounts = [...new Set(status.renditions.map((rendition) => rendition.segments.length))];
    card.append(h("dl", { class: "stats" },
      stat("live-edge-age", "Live-edge age", seconds(edge), `limit ${(1.5 * targetDuration).toFixed(1)} s`, `age-${ageClass(edge, targetDuration)}`),
      stat("target-duration", "Target duration", `${targetDuration} s`, null),
      stat("window", "Window", `${status.windowSeconds} s`, `${listed.toFixed(1)} s listed`),
      stat("renditions", "Renditions", String(status.renditions.length),
        segmentCounts.length === 1 ? `${segmentCounts[0]} segments each` : `${Math.min(...segmentCounts)}–${Math.max(...segmentCounts)} segments`),
      stat("stalls", "Stalls", String(status.stalls.length),
        status.stalls.some((stall) => stall.endedAt == null) ? "one ongoing" : "none ongoing",
        status.stalls.some((stall) => stall.endedAt == null) ? "age-bad" : "")));

    if (status.renditions.length > 0) {
      card.append(h("figure", { class: "timeline-figure" },
        timeline(channel, generatedAt, index, width),
        h("figcaption", {}, legend())));
    } else {
      card.append(h("p", { class: "placeholder" }, "No rendition has listed a segment yet."));
    }

    card.append(h("div", { class: "panels" },
      h("section", { class: "panel", "aria-label": "Renditions" }, renditionTable(status, generatedAt)),
      ingestPanel(channel, generatedAt),
      stallPanel(status, generatedAt),
      breakPanel(channel, generatedAt)));
    return card;
  }

  // MARK: - Page

  function render(document_) {
    lastDocument = document_;
    const main = document.getElementById("channels");
    // The card's inner width: main's content box less the card's padding and borders (status.css).
    const style = getComputedStyle(main);
    const inner = main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const width = Math.max(560, Math.floor(inner - 42));
    const cards = document_.channels.map((channel, index) => channelCard(channel, document_.generatedAt, index, width));
    if (cards.length === 0) cards.push(h("p", { class: "placeholder" }, "No channels are configured."));
    main.replaceChildren(...cards);
    main.setAttribute("aria-busy", "false");

    const counts = { live: 0, degraded: 0, starting: 0 };
    for (const channel of document_.channels) counts[channel.state] = (counts[channel.state] || 0) + 1;
    document.getElementById("server-version").textContent = document_.server.version;
    document.getElementById("server-uptime").textContent = duration(document_.server.uptimeSeconds);
    document.getElementById("server-channels").textContent = [
      `${counts.live} live`, counts.degraded ? `${counts.degraded} degraded` : null, counts.starting ? `${counts.starting} starting` : null,
    ].filter(Boolean).join(" · ");
    document.getElementById("server-updated").textContent = clock(document_.generatedAt * 1000);
    document.title = counts.degraded ? `(${counts.degraded} degraded) Headwater · status` : "Headwater · status";
  }

  function setConnection(state, label) {
    const element = document.getElementById("connection");
    element.className = `connection ${state}`;
    element.querySelector(".label").textContent = label;
  }

  async function poll() {
    try {
      const response = await fetch("api/status", { cache: "no-store", headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const document_ = await response.json();
      render(document_);
      lastSuccess = Date.now();
      setConnection("connected", "Connected");
      document.body.classList.remove("stale");
    } catch (error) {
      setConnection("offline", `Offline: ${error.message}. Retrying…`);
      if (lastDocument) document.body.classList.add("stale");
    } finally {
      setTimeout(poll, POLL_MS);
    }
  }

  // Re-lay the timelines at the new width when the window is resized.
  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { if (lastDocument) render(lastDocument); }, 150);
  });

  // Keep "Connected" honest when polls silently stop (a suspended tab, a hung request).
  setInterval(() => {
    if (lastSuccess && Date.now() - lastSuccess > 3 * POLL_MS) setConnection("offline", "No update for a while. Retrying…");
  }, 1000);

  poll();
})();
