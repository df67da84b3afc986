#!/usr/bin/env bash
# Regenerates Headwater's demo media from scratch:
#   Public/demo/         20 s looping demo channel (10 x 2 s segments), 3 video variants + alternate audio
#   Public/ads/ad1..ad4  ad creatives (6 s, 6 s, 6 s, 4 s) conditioned to the demo ladder
#   Public/slate/        2 s "We'll be right back" slate, same ladder
# then runs measure.py, which rewrites every media playlist, measures BANDWIDTH /
# AVERAGE-BANDWIDTH / CODECS / RESOLUTION, writes the master playlists and checks everything.
#
# Usage:  Public/media-tools/generate.sh        (from anywhere; needs ffmpeg, ffprobe, python3, DejaVu fonts)
#
# Every setting is fixed (x264 single-threaded, no random inputs), so the same ffmpeg build gives the
# same bytes. Takes about a minute or two.
set -euo pipefail

TOOLS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PUBLIC=$(dirname "$TOOLS")
FONT_SANS=${FONT_SANS:-/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf}
FONT_MONO=${FONT_MONO:-/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf}

for tool in ffmpeg ffprobe python3; do
  command -v "$tool" >/dev/null || { echo "generate.sh: $tool not found" >&2; exit 1; }
done
for font in "$FONT_SANS" "$FONT_MONO"; do
  [[ -f $font ]] || { echo "generate.sh: font $font not found (apt-get install -y --no-install-recommends fonts-dejavu-core)" >&2; exit 1; }
done

# ---------------------------------------------------------------------------------------------
# The ladder. Every package (demo, ads, slate) is encoded with exactly these parameters, so a
# player can switch from content to an ad (after EXT-X-DISCONTINUITY) without any codec change.
#   name  width height  video-maxrate(kbit/s)  H.264 level (lowest that fits WxH@25 fps, Main)
LADDER=(
  "v0 416 234  80 1.3"
  "v1 640 360 140 3.0"
  "v2 960 540 240 3.1"
)
FPS=25
SEG=2                 # segment duration, seconds
GOP=$((FPS * SEG))    # one IDR at the start of every segment
AUDIO_ARGS=(-c:a aac -profile:a aac_low -b:a 48k -ar 48000 -ac 2)
# ---------------------------------------------------------------------------------------------

WORK=$(mktemp -d "${TMPDIR:-/tmp}/headwater-media.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

FF=(ffmpeg -nostdin -hide_banner -loglevel error -y)

# HLS (MPEG-TS) output options for one rendition directory. measure.py rewrites the playlist.
hls_out() {
  local dir=$1
  printf '%s\n' -f hls -hls_time "$SEG" -hls_playlist_type vod -hls_segment_type mpegts \
    -hls_list_size 0 -hls_segment_filename "$dir/seg-%05d.ts" \
    -metadata service_provider=Headwater -metadata service_name=Headwater \
    "$dir/index.m3u8"
}

# video_args LEVEL MAXRATE: the H.264 settings shared by every package.
# -bf 0: without B-frames DTS = PTS, so the muxer cuts the muxed audio within one AAC frame of the
# video boundary (with B-frames it interleaves by DTS and every segment's audio ends ~80 ms early,
# which leaves an audio hole wherever a stitcher cuts away to an ad).
# Capped CRF: the busy demo runs at the cap; the simpler ads and slate stay below it.
video_args() {
  local level=$1 rate=$2
  printf '%s\n' -c:v libx264 -profile:v main -level:v "$level" -pix_fmt yuv420p \
    -preset slow -threads 1 -bf 0 \
    -crf 23 -maxrate "${rate}k" -bufsize "${rate}k" -x264-params "vbv-init=0.3:open-gop=0" \
    -r "$FPS" -g "$GOP" -keyint_min "$GOP" -sc_threshold 0 \
    -force_key_frames "expr:gte(t,n_forced*$SEG)" \
    -bsf:v filter_units=remove_types=6
}

# textfile NAME CONTENT: drawtext reads its text from files (no filtergraph escaping needed).
textfile() {
  printf '%s' "$2" >"$WORK/$1.txt"
  printf '%s' "$WORK/$1.txt"
}

# drawtext FILE FONT SIZE Y [BOX]: centred white text on a box (opaque by default: text over busy
# video stays legible at these bit rates).
drawtext() {
  printf "drawtext=fontfile=%s:textfile=%s:fontsize=%d:fontcolor=white:box=1:boxcolor=%s:boxborderw=%d:x=(w-tw)/2:y=%s" \
    "$2" "$1" "$3" "${5:-black}" $(($3 / 4 + 1)) "$4"
}

# encode_variant PKG_DIR VARIANT W H RATE LEVEL DURATION VIDEO_GRAPH AUDIO_SOURCE
# VIDEO_GRAPH is a filter_complex producing [v]; AUDIO_SOURCE a lavfi audio source.
encode_variant() {
  local dir=$1/$2
  mkdir -p "$dir"
  mapfile -t V < <(video_args "$6" "$5")
  mapfile -t H < <(hls_out "$dir")
  "${FF[@]}" -filter_complex "$8" -f lavfi -i "$9" \
    -map '[v]' -map 0:a -t "$7" "${V[@]}" "${AUDIO_ARGS[@]}" "${H[@]}"
}

# first_audio_pts FILE: PTS (90 kHz ticks) of the first audio packet.
first_audio_pts() {
  ffprobe -v error -select_streams a:0 -show_entries packet=pts -read_intervals '%+#1' \
    -of default=noprint_wrappers=1:nokey=1 "$1" | head -n1
}

# encode_alt_audio PKG_DIR DURATION AUDIO_SOURCE
# The alternate audio rendition gets the same timestamps as the audio muxed in v0 (which x264's
# B-frame delay shifts), so a player switching audio tracks stays in sync with the video.
encode_alt_audio() {
  local dir=$1/audio-alt
  mkdir -p "$dir"
  mapfile -t H < <(hls_out "$dir")
  "${FF[@]}" -f lavfi -i "$3" -t "$2" "${AUDIO_ARGS[@]}" "${H[@]}"
  # The shift is found by measuring (the muxer's own offsets and the AAC priming frame interact),
  # so re-encode with a corrected -output_ts_offset until the first PTS matches (2 passes).
  local want have ticks=0 try
  want=$(first_audio_pts "$1/v0/seg-00000.ts")
  for try in 1 2 3 4; do
    have=$(first_audio_pts "$dir/seg-00000.ts")
    [[ $want == "$have" ]] && return 0
    ticks=$((ticks + want - have))
    rm -f "$dir"/*
    "${FF[@]}" -f lavfi -i "$3" -t "$2" "${AUDIO_ARGS[@]}" \
      -output_ts_offset "$(python3 -c "print('%.6f' % ($ticks / 90000))")" "${H[@]}"
  done
  echo "generate.sh: $dir: cannot align the first audio PTS ($have, want $want)" >&2
  exit 1
}

# one_frame_per_pes DIR: remuxes every segment of DIR so that each AAC frame has a PES packet of its
# own. ffmpeg's muxer packs ~0.36 s of audio into one PES (-pes_payload_size 2930 by default), and a
# low-latency part can only start where a PES starts (Headwater's TransportStreamParts); one frame
# per PES makes the cut 21 ms fine (+4.5 KB a segment). -c copy -copyts: the same AAC bytes and PTS;
# measure.py write strips the SDT the muxer adds, and check compares the first PTS with v0's.
one_frame_per_pes() {
  local seg
  for seg in "$1"/seg-*.ts; do
    "${FF[@]}" -copyts -i "$seg" -map 0 -c copy -muxdelay 0 -muxpreload 0 -pes_payload_size 0 \
      -mpegts_copyts 1 -pat_period 1000 -sdt_period 1000 -f mpegts "$WORK/repacked.ts"
    mv "$WORK/repacked.ts" "$seg"
  done
}

# progress_bar W H DURATION PERIOD: a white bar along the bottom filling up once per PERIOD seconds.
# (Drawn over [bg], result [bar].)
progress_bar() {
  local w=$1 h=$2 dur=$3 period=$4 bh=$(($2 / 36))
  local frames=$((period * FPS))
  printf "color=c=white:s=%dx%d:r=%d:d=%s[pb];[bg][pb]overlay=x='-w+w*(mod(n,%d)+1)/%d':y=%d:eof_action=pass:shortest=1" \
    "$w" "$bh" "$FPS" "$dur" "$frames" "$frames" $((h - bh))
}

# ------------------------------------------------------------------ demo channel (20 s loop)
make_demo() {
  local pkg=$PUBLIC/demo dur=20
  rm -rf "$pkg"; mkdir -p "$pkg"
  local title counter
  title=$(textfile demo-title "HEADWATER DEMO")
  counter=$(textfile demo-counter "t %{pts:hms}  frame %{eif:n:d:3}  seg %{eif:trunc(n/$GOP):d:2}")
  for row in "${LADDER[@]}"; do
    read -r name w h rate level <<<"$row"
    local label graph
    label=$(textfile "demo-$name" "$name · ${w}x${h} · ${FPS} fps")
    graph="testsrc2=s=${w}x${h}:r=${FPS}:d=${dur}[bg];$(progress_bar "$w" "$h" "$dur" "$dur")"
    graph+=",$(drawtext "$title" "$FONT_SANS" $((h / 9)) "h*0.10")"
    graph+=",$(drawtext "$label" "$FONT_SANS" $((h / 13)) "h*0.30")"
    graph+=",$(drawtext "$counter" "$FONT_MONO" $((h / 13)) "h*0.76")[v]"
    # 440 Hz tone with an 880 Hz beep at the start of every second (20 s = 8800 whole cycles:
    # the loop point is phase-continuous).
    encode_variant "$pkg" "$name" "$w" "$h" "$rate" "$level" "$dur" "$graph" \
      "sine=f=440:beep_factor=2:sample_rate=48000:d=${dur}"
  done
  # "Alternate" (fr): 660 Hz tone with a 1320 Hz beep every second.
  encode_alt_audio "$pkg" "$dur" "sine=f=660:beep_factor=2:sample_rate=48000:d=${dur}"
}

# ------------------------------------------------------------------ ad creatives
# make_ad N DURATION BACKGROUND MAIN_HZ ALT_HZ
# BACKGROUND is a lavfi source name plus options, without size/rate/duration.
make_ad() {
  local n=$1 dur=$2 bg=$3 main_hz=$4 alt_hz=$5
  local pkg=$PUBLIC/ads/ad$n
  rm -rf "$pkg"; mkdir -p "$pkg"
  local title counter
  title=$(textfile "ad$n-title" "AD $n · ${dur}s")
  counter=$(textfile "ad$n-counter" "%{pts:hms}  ends in %{eif:ceil($dur-t):d} s")
  for row in "${LADDER[@]}"; do
    read -r name w h rate level <<<"$row"
    local label graph sep=":"
    [[ $bg == *=* ]] || sep="="
    label=$(textfile "ad$n-$name" "$name · ${w}x${h}")
    graph="${bg}${sep}s=${w}x${h}:r=${FPS}:d=${dur},format=yuv420p[bg];$(progress_bar "$w" "$h" "$dur" "$dur")"
    graph+=",$(drawtext "$title" "$FONT_SANS" $((h / 5)) "h*0.20" "black@0.6")"
    graph+=",$(drawtext "$label" "$FONT_SANS" $((h / 13)) "h*0.52")"
    graph+=",$(drawtext "$counter" "$FONT_MONO" $((h / 13)) "h*0.72")[v]"
    encode_variant "$pkg" "$name" "$w" "$h" "$rate" "$level" "$dur" "$graph" \
      "sine=f=${main_hz}:sample_rate=48000:d=${dur}"
  done
  encode_alt_audio "$pkg" "$dur" "sine=f=${alt_hz}:sample_rate=48000:d=${dur}"
}

# ------------------------------------------------------------------ slate
make_slate() {
  local pkg=$PUBLIC/slate dur=2
  rm -rf "$pkg"; mkdir -p "$pkg"
  local title brand
  title=$(textfile slate-title "We'll be right back")
  brand=$(textfile slate-brand "HEADWATER")
  for row in "${LADDER[@]}"; do
    read -r name w h rate level <<<"$row"
    local label graph
    label=$(textfile "slate-$name" "$name · ${w}x${h}")
    # The progress bar fills once per 2 s segment, so a repeated slate loops seamlessly.
    graph="color=c=0x202830:s=${w}x${h}:r=${FPS}:d=${dur}[bg];$(progress_bar "$w" "$h" "$dur" "$dur")"
    graph+=",$(drawtext "$brand" "$FONT_SANS" $((h / 13)) "h*0.18")"
    graph+=",$(drawtext "$title" "$FONT_SANS" $((h / 9)) "h*0.40")"
    graph+=",$(drawtext "$label" "$FONT_SANS" $((h / 13)) "h*0.68")[v]"
    encode_variant "$pkg" "$name" "$w" "$h" "$rate" "$level" "$dur" "$graph" \
      "anullsrc=r=48000:cl=stereo:d=${dur}"
  done
  encode_alt_audio "$pkg" "$dur" "anullsrc=r=48000:cl=stereo:d=${dur}"
}

echo "ffmpeg: $(ffmpeg -version | head -n1)"
echo "encoding demo…";  make_demo
rm -rf "$PUBLIC/ads"; mkdir -p "$PUBLIC/ads"
echo "encoding ads…"
#       n  dur  background                          main Hz  alt Hz
make_ad 1  6    "color=c=0xB71C1C"                  550      825
make_ad 2  6    "smptebars"                         330      495
make_ad 3  6    "color=c=0x0D47A1"                  990      1485
make_ad 4  4    "color=c=0x1B5E20"                  262      393
echo "encoding slate…"; make_slate

echo "measuring, writing playlists, checking…"
python3 "$TOOLS/measure.py" write "$PUBLIC"
# The live demo channel publishes its segments in 0.4 s parts, and a low-latency stitched playlist
# lists the ads and slate in parts too: every audio-alt is repacked with one AAC frame per PES once
# measure.py has folded its last sliver in, every segment gets PAT+PMT before each part boundary
# (part-headers.py), then all is measured again.
for dir in "$PUBLIC"/demo/audio-alt "$PUBLIC"/ads/ad*/audio-alt "$PUBLIC"/slate/audio-alt; do
  one_frame_per_pes "$dir"
done
python3 "$TOOLS/part-headers.py" "$PUBLIC"/{demo,ads/ad*,slate}/{v0,v1,v2,audio-alt}/seg-*.ts >/dev/null
python3 "$TOOLS/measure.py" write "$PUBLIC"
python3 "$TOOLS/measure.py" check "$PUBLIC"
