// The live viewer's page: one HTML document with its CSS and script, served from the binary. It
// polls /api/frame (one request in flight at a time, every 200 ms) and draws the grid on a canvas,
// row 0 at the bottom (as taxel-cli's PNGs), with a colour bar from 0 to the frame's maximum.
#include "server/viewer.h"

namespace taxel::server {
namespace {

constexpr char kPage[] = R"taxelpage(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Taxel live viewer</title>
<style>
  body { margin: 0; font: 14px system-ui, sans-serif; background: #f4f4f4; color: #222; }
  header { height: 88px; padding: 8px 20px; box-sizing: border-box; }
  h1 { font-size: 18px; margin: 0 0 8px 0; }
  label { margin-right: 12px; }
  select, input { font: inherit; }
  /* Fixed places: tests/viewer crops the heatmap from a screenshot by these numbers. */
  #heat { position: absolute; left: 20px; top: 110px; width: 440px; height: 440px; background: #202020; }
  #bar { position: absolute; left: 480px; top: 110px; width: 24px; height: 440px; }
  #barmax { position: absolute; left: 512px; top: 104px; }
  #barmin { position: absolute; left: 512px; top: 538px; }
  #barunit { position: absolute; left: 512px; top: 320px; font-weight: bold; }
  #status { position: absolute; left: 20px; top: 560px; }
  #error { color: #b00020; }
</style>
</head>
<body>
<header>
  <h1>Taxel live viewer</h1>
  <label>scene <select id="scene"></select></label>
  <label>sensor <select id="sensor"></select></label>
  <label>env <input id="env" type="number" min="0" value="0" style="width: 6em"></label>
  <label>channel <select id="channel"></select></label>
  <label>branch <select id="branch"><option>measured</option><option>ground_truth</option></select></label>
</header>
<canvas id="heat" width="440" height="440"></canvas>
<canvas id="bar" width="24" height="440"></canvas>
<div id="barmax"></div><div id="barunit"></div><div id="barmin"></div>
<div id="status"><span id="info">loading…</span> <span id="error"></span></div>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
// A token given in the URL is sent as a header from now on and taken out of the address bar.
const token = params.get("token");
if (token !== null) {
  params.delete("token");
  const rest = params.toString();
  history.replaceState(null, "", location.pathname + (rest ? "?" + rest : ""));
}
const headers = token ? { Authorization: "Bearer " + token } : {};
let scenes = [];
const wanted = { scene: params.get("scene"), sensor: params.get("sensor"), channel: params.get("channel") };
if (params.get("env") !== null) $("env").value = params.get("env");
if (params.get("branch") !== null) $("branch").value = params.get("branch");

async function getJson(path) {
  const r = await fetch(path, { headers, cache: "no-store" });
  const body = await r.json().catch(() => ({ error: r.status + " " + r.statusText }));
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

// Colour map (dark blue → cyan → yellow → red), t in [0, 1].
const STOPS = [[0, [48, 18, 59]], [0.25, [70, 134, 251]], [0.5, [27, 229, 181]],
               [0.75, [249, 186, 56]], [1, [180, 30, 10]]];
function colour(t) {
  t = Math.min(1, Math.max(0, t));
  for (let i = 1; i < STOPS.length; i++) {
    const [t1, c1] = STOPS[i], [t0, c0] = STOPS[i - 1];
    if (t <= t1) {
      const u = (t - t0) / (t1 - t0);
      return c0.map((v, k) => Math.round(v + u * (c1[k] - v)));
    }
  }
  return STOPS[STOPS.length - 1][1];
}
function css(rgb) { return "rgb(" + rgb.join(",") + ")"; }

function fill(select, names, want) {
  const old = select.value;
  select.replaceChildren(...names.map((n) => new Option(n, n)));
  if (want !== null && names.includes(want)) select.value = want;
  else if (names.includes(old)) select.value = old;
}

function refreshSelects() {
  fill($("scene"), scenes.map((s) => s.name), wanted.scene);
  const scene = scenes.find((s) => s.name === $("scene").value);
  const sensors = scene ? scene.sensors : [];
  fill($("sensor"), sensors.map((s) => s.name), wanted.sensor);
  const sensor = sensors.find((s) => s.name === $("sensor").value);
  fill($("channel"), sensor ? sensor.channels.map((c) => c.name) : [], wanted.channel);
  if (scene) $("env").max = scene.num_envs - 1;
}

async function loadScenes() {
  try {
    scenes = (await getJson("/api/scenes")).scenes;
    refreshSelects();
    if (scenes.length === 0) $("info").textContent = "no scenes yet";
  } catch (e) {
    $("error").textContent = e.message;
  }
}

function drawBar(unit, min, max) {
  const bar = $("bar").getContext("2d");
  for (let y = 0; y < 440; y++) {
    bar.fillStyle = css(colour(1 - y / 439));
    bar.fillRect(0, y, 24, 1);
  }
  $("barmax").textContent = max.toPrecision(3);
  $("barmin").textContent = min.toPrecision(3);
  $("barunit").textContent = unit || "(0/1)";
}

function draw(f) {
  const ctx = $("heat").getContext("2d");
  ctx.fillStyle = "#202020";
  ctx.fillRect(0, 0, 440, 440);
  // Scale from 0 (every viewer quantity is ≥ 0) to the frame's maximum.
  const lo = 0, hi = f.max > 0 ? f.max : 1;
  const cell = Math.max(1, Math.floor(Math.min(440 / f.cols, 440 / f.rows)));
  for (let r = 0; r < f.rows; r++) {
    for (let c = 0; c < f.cols; c++) {
      const v = f.values[r * f.cols + c];
      ctx.fillStyle = v === null ? "#808080" : css(colour((v - lo) / (hi - lo)));
      ctx.fillRect(c * cell, (f.rows - 1 - r) * cell, cell, cell);  // row 0 at the bottom
    }
  }
  drawBar(f.unit, lo, hi);
  $("info").textContent = "step " + f.step + " · env " + f.env + " · " + f.quantity +
      (f.unit ? " [" + f.unit + "]" : "") + " · max " + f.max.toPrecision(3) + " · " + f.rows + "×" + f.cols;
}

async function poll() {
  const scene = $("scene").value, sensor = $("sensor").value;
  if (scene && sensor) {
    const q = new URLSearchParams({ scene, sensor, env: $("env").value, channel: $("channel").value,
                                    branch: $("branch").value });
    try {
      draw(await getJson("/api/frame?" + q));
      $("error").textContent = "";
    } catch (e) {
      $("error").textContent = e.message;
    }
  }
  setTimeout(poll, 200);
}

for (const id of ["scene", "sensor"]) {
  $(id).addEventListener("change", () => { wanted[id] = $(id).value; refreshSelects(); });
}
$("channel").addEventListener("change", () => { wanted.channel = $("channel").value; });
loadScenes().then(poll);
setInterval(loadScenes, 2000);
</script>
</body>
</html>
)taxelpage";

}  // namespace

absl::string_view ViewerPage() { return kPage; }

}  // namespace taxel::server
