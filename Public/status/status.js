// Headwater status page: polls api/status every 2 s and draws one card per channel.
// Plain DOM, no dependencies, no inline styles (works behind a strict CSP), no external fetches.
// An ES module (deferred, strict): dom.js builds elements, format.js writes figures, timeline.js
// draws each channel's window.

import { h } from "./dom.js";
import { seconds, duration, bytes, bitrate, number, perSecond, clock } from "./format.js";
import { timeline, legend, listedSeconds, kindCounts } from "./timeline.js";

{
  const POLL_MS = 2000;
  /** Per channel: the previous poll's ingest counters, to compute a rate. */
  const previous = new Map();
  let lastDocument = null;
  let lastSuccess = 0;

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

  function breakPanel(channel) {
    if (!channel.breaks) return null;
    const breaks = channel.breaks.slice().reverse();
    const shown = breaks.slice(0, 5);
    const body = shown.length === 0
      ? h("p", { class: "calm" }, "No ad break in the channel's recent history.")
      : h("table", { class: "stalls ad-breaks" },
        h("thead", {}, h("tr", {},
          h("th", { scope: "col" }, "Started"), h("th", { scope: "col", class: "num" }, "Planned"),
          h("th", { scope: "col", class: "num" }, "Aired"), h("th", { scope: "col", class: "num" }, "Slots"))),
        h("tbody", {}, shown.map((adBreak) => {
          const ongoing = adBreak.durationSeconds == null;
          const aired = ongoing ? h("span", { class: "pill" }, "on air")
            : adBreak.endedEarly ? [h("span", { class: "pill early", title: "ended before its planned end" }, "early"), " ", seconds(adBreak.durationSeconds, 1)]
            : seconds(adBreak.durationSeconds, 1);
          return h("tr", { title: `${adBreak.id} · MSN ${adBreak.startMediaSequence}`, "data-break": adBreak.id },
            h("td", {}, clock(adBreak.startedAt)),
            h("td", { class: "num" }, seconds(adBreak.plannedDurationSeconds, 1)),
            h("td", { class: "num" }, aired),
            h("td", { class: "num" }, ongoing ? "…" : String(adBreak.endMediaSequence - adBreak.startMediaSequence)));
        })));
    return h("section", { class: "panel ad-break-history", "aria-label": "Ad breaks" },
      h("h3", {}, "Ad breaks", breaks.length > shown.length ? h("span", { class: "muted" }, ` · latest ${shown.length} of ${breaks.length}`) : null),
      body);
  }

  /** Viewer requests over the last minute and since the start, and sessions when the channel has ads. */
  function trafficStats(channel) {
    const traffic = channel.traffic;
    if (!traffic) return null;
    const window = `last ${traffic.windowSeconds} s`;
    const errorClass = (rate) => (rate > 0 ? "age-bad" : "");
    return h("dl", { class: "stats traffic", "aria-label": "Viewer traffic" },
      stat("requests", "Requests", perSecond(traffic.requestsPerSecond), `${window} · ${number.format(traffic.requests)} total`),
      stat("client-errors", "4xx", perSecond(traffic.clientErrorsPerSecond), `${number.format(traffic.clientErrors)} total`,
        traffic.clientErrorsPerSecond > 0 ? "age-warn" : ""),
      stat("server-errors", "5xx", perSecond(traffic.serverErrorsPerSecond), `${number.format(traffic.serverErrors)} total`,
        errorClass(traffic.serverErrorsPerSecond)),
      channel.sessionsStarted != null
        ? stat("sessions", "Sessions started", number.format(channel.sessionsStarted), "/ssai/ viewers")
        : stat("sessions", "Sessions started", "—", "no ads on this channel"));
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
      channel.degradedReason ? h("span", { class: "reason" }, channel.degradedReason) : null,
      channel.adsUnfitReason ? h("span", { class: "flag ads-unfit", "data-flag": "ads-unfit", title: channel.adsUnfitReason },
        h("span", { "aria-hidden": "true" }, "⚠ "), "ads not stitched") : null));
    if (channel.adsUnfitReason) {
      card.append(h("p", { class: "alert ads-unfit", role: "alert" },
        h("strong", {}, "Ads cannot be stitched on this channel: "), channel.adsUnfitReason,
        ". Viewers of /ssai/ get 503; the shared /live/ playlists are unaffected."));
    }
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
        status.stalls.some((stall) => stall.endedAt == null) ? "age-bad" : "")),
      trafficStats(channel));

    if (status.renditions.length > 0) {
      card.append(h("figure", { class: "timeline-figure" },
        timeline(channel, generatedAt, index, width),
        h("figcaption", {}, legend(Array.isArray(channel.breaks)))));
    } else {
      card.append(h("p", { class: "placeholder" }, "No rendition has listed a segment yet."));
    }

    card.append(h("div", { class: "panels" },
      h("section", { class: "panel", "aria-label": "Renditions" }, renditionTable(status, generatedAt)),
      ingestPanel(channel, generatedAt),
      stallPanel(status, generatedAt),
      breakPanel(channel)));
    return card;
  }

  /** Outcome counts above 0, largest first, as "ok 300 · forbidden 2"; the ones to worry about marked. */
  function outcomes(counts, worrying) {
    const entries = Object.entries(counts || {}).filter(([, count]) => count > 0)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    if (entries.length === 0) return [h("span", { class: "muted" }, "none yet")];
    return entries.map(([outcome, count], i) => [i ? " · " : null,
      h("span", { class: worrying.has(outcome) ? "outcome bad" : "outcome", "data-outcome": outcome },
        `${outcome.replace("_", " ")} ${number.format(count)}`)]);
  }

  /** Stitched-playlist and beacon outcomes: server-wide, as /metrics counts them. */
  function adsSummary(document_) {
    const server = document_.server;
    const anyAds = document_.channels.some((channel) => channel.breaks || channel.adsUnfitReason || channel.sessionsStarted != null);
    if (!anyAds && !Object.keys(server.stitchedPlaylists || {}).length && !Object.keys(server.beacons || {}).length) return null;
    return h("section", { class: "server-ads", "aria-label": "Ad insertion, all channels" },
      h("h2", {}, "Ad insertion", h("span", { class: "muted" }, " · all channels, since start")),
      h("dl", { class: "pairs wide" },
        h("div", { "data-summary": "stitched" }, h("dt", {}, "Stitched playlists"),
          h("dd", {}, outcomes(server.stitchedPlaylists, new Set(["error", "unavailable"])))),
        h("div", { "data-summary": "beacons" }, h("dt", {}, "Tracking beacons"),
          h("dd", {}, outcomes(server.beacons, new Set(["failed", "dropped"]))))));
  }

  // MARK: - Page

  function render(document_) {
    lastDocument = document_;
    const main = document.getElementById("channels");
    // The card's inner width: main's content box less the card's padding and borders (status.css).
    const style = getComputedStyle(main);
    const inner = main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const width = Math.max(560, Math.floor(inner - 42));
    // Channels that need attention first (degraded, or ads that cannot be stitched), then those
    // starting, then the live ones; by name within each (the API's order).
    const rank = (channel) => (channel.state === "degraded" || channel.adsUnfitReason ? 0 : channel.state === "starting" ? 1 : 2);
    const ordered = document_.channels.map((channel, index) => ({ channel, index }))
      .sort((a, b) => rank(a.channel) - rank(b.channel) || a.index - b.index);
    const cards = ordered.map(({ channel, index }) => channelCard(channel, document_.generatedAt, index, width));
    if (cards.length === 0) cards.push(h("p", { class: "placeholder" }, "No channels are configured."));
    const summary = adsSummary(document_);
    main.replaceChildren(...(summary ? [summary] : []), ...cards);
    main.setAttribute("aria-busy", "false");

    const counts = { live: 0, degraded: 0, starting: 0 };
    for (const channel of document_.channels) counts[channel.state] = (counts[channel.state] || 0) + 1;
    document.getElementById("server-version").textContent = document_.server.version;
    document.getElementById("server-uptime").textContent = duration(document_.server.uptimeSeconds);
    document.getElementById("server-channels").textContent = [
      `${counts.live} live`, counts.degraded ? `${counts.degraded} degraded` : null, counts.starting ? `${counts.starting} starting` : null,
    ].filter(Boolean).join(" · ");
    document.getElementById("server-updated").textContent = clock(document_.generatedAt * 1000);
    const unfit = document_.channels.filter((channel) => channel.adsUnfitReason).length;
    const alerts = [counts.degraded ? `${counts.degraded} degraded` : null, unfit ? `${unfit} without ads` : null].filter(Boolean);
    document.title = alerts.length ? `(${alerts.join(", ")}) Headwater · status` : "Headwater · status";
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
}
