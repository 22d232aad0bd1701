#!/usr/bin/env python3
"""The live viewer in a real browser: headless Chromium loads the page of a real taxel-server
(--ui_address, with a tokens file: the page gets ?token= and sends it as a header) while the Python
client steps a ball back and forth across a 16 x 16 KinematicTaxel pad; the screenshot's PIXELS must
show a heatmap, and the page's text the step, the quantity and the unit.

    viewer_browser_test.py TAXEL_SERVER [SCREENSHOT.png]     (PYTHONPATH with client/python)

Exits 77 (CTest: skipped) without chromium (Debian package chromium; scripts/install-deps.sh).

The scene and its motion are examples/python/live_viewer.py's: a ball r = 5 cm, centre
(x(t), +5 mm, 51.5 mm), over 16 x 16 probes of pitch 1 mm at y = -7.5 .. +7.5 mm (R = 2 mm). A probe at p
is pressed by depth = R - (|p - c| - r), none beyond a lateral distance of
sqrt((r + R)^2 - (51.5 mm)^2) = 7.2 mm. So the rows at y >= -1.5 mm (rows 6..15) can see force and
the rows at y <= -2.5 mm (rows 0..5) never do: with row 0 drawn at the bottom, the hot cells are in
the upper part of the heatmap and the bottom rows keep the colour of 0.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
from PIL import Image

import taxel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
import live_viewer  # noqa: E402  (the example's scene and motion)

TOKEN = "viewer-test-token"
N = live_viewer.N
# The page's fixed layout (server/viewer_page.cc): the heatmap canvas, in CSS px = screenshot px.
HEAT_LEFT, HEAT_TOP, HEAT_SIZE = 20, 110, 440
BACKGROUND = (32, 32, 32)
# The page's colour map stops (server/viewer_page.cc), to turn a pixel back into t in [0, 1].
STOPS = [(0, (48, 18, 59)), (0.25, (70, 134, 251)), (0.5, (27, 229, 181)), (0.75, (249, 186, 56)),
         (1, (180, 30, 10))]


def colour(t: float) -> np.ndarray:
    for (t0, c0), (t1, c1) in zip(STOPS, STOPS[1:]):
        if t <= t1:
            u = (t - t0) / (t1 - t0)
            return np.array(c0) + u * (np.array(c1) - np.array(c0))
    return np.array(STOPS[-1][1])


RAMP = np.array([colour(t) for t in np.linspace(0, 1, 401)])


def heat_t(rgb) -> float:
    """t of a pixel on the colour map; None when the pixel is not a colour-map colour."""
    d = np.linalg.norm(RAMP - np.array(rgb[:3], dtype=float), axis=1)
    k = int(np.argmin(d))
    return k / 400 if d[k] < 6 else None


def chromium(binary: str, url: str, *args: str) -> str:
    cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=800,600",
           "--virtual-time-budget=3000", "--user-data-dir=" + tempfile.mkdtemp(prefix="taxel-chromium-"), *args, url]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=90)
    if out.returncode != 0:
        raise SystemExit(f"FAIL: chromium exited {out.returncode}:\n{out.stderr[-2000:]}")
    return out.stdout


def check_pixels(path: str) -> None:
    img = Image.open(path).convert("RGB")
    cell = HEAT_SIZE // N  # the page's integer cell size: floor(440 / 16) = 27 px
    # t of every cell's centre pixel, rows as the page draws them: row r at the bottom - r.
    t = np.full((N, N), np.nan)
    for r in range(N):
        for c in range(N):
            px = img.getpixel((HEAT_LEFT + c * cell + cell // 2, HEAT_TOP + (N - 1 - r) * cell + cell // 2))
            if tuple(px) == BACKGROUND:
                raise SystemExit(f"FAIL: cell row {r} col {c} is background: no heatmap drawn")
            v = heat_t(px)
            if v is None:
                raise SystemExit(f"FAIL: cell row {r} col {c} has colour {px}, not one of the colour map")
            t[r, c] = v
    distinct = len({round(v, 2) for v in t.flat})
    print(f"viewer_browser_test: {distinct} distinct heat levels; row maxima (row 0 first): "
          + " ".join(f"{m:.2f}" for m in t.max(axis=1)))
    if distinct < 5:
        raise SystemExit(f"FAIL: only {distinct} distinct heat colours in the heatmap")
    if t.max() < 0.99:
        raise SystemExit("FAIL: no cell at the frame's maximum (t = 1)")
    # Rows at y <= -2.5 mm (rows 0..5) are out of reach: the colour of 0. The hottest row is
    # above the middle (y = +5 mm is row 12.5).
    if t[:6].max() > 0.01:
        raise SystemExit(f"FAIL: bottom rows show force: {t[:6].max():.2f} (row 0 not at the bottom?)")
    hottest = int(np.argmax(t.max(axis=1)))
    if not 10 <= hottest <= 15:
        raise SystemExit(f"FAIL: hottest row {hottest}, expected one of 10..15 (near y = +5 mm)")
    # The colour bar is drawn next to it, top = hot.
    top, bottom = img.getpixel((490, 112)), img.getpixel((490, 547))
    if heat_t(top) is None or heat_t(top) < 0.95 or heat_t(bottom) is None or heat_t(bottom) > 0.05:
        raise SystemExit(f"FAIL: colour bar top {top}, bottom {bottom}")


def main() -> int:
    binary = sys.argv[1]
    shot = sys.argv[2] if len(sys.argv) > 2 else os.path.join(tempfile.mkdtemp(prefix="taxel-viewer-"), "viewer.png")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("viewer_browser_test: SKIPPED: chromium not found (apt-get install chromium)")
        return 77
    work = tempfile.mkdtemp(prefix="taxel-viewer-")
    tokens = os.path.join(work, "tokens")
    with open(tokens, "w") as f:
        f.write(f"{TOKEN} lab\n")
    server = taxel.LocalServer(binary, ["--ui_address=127.0.0.1:0", f"--auth_tokens_file={tokens}"], threads=2).start()
    stop = threading.Event()
    stepper = None
    try:
        started = next(line for line in server.log if "event=server_started" in line)
        ui = int(re.search(r"ui_port=(\d+)", started).group(1))
        client = taxel.Client(server.target, token=TOKEN)
        scene = client.create_scene(live_viewer.spec(num_envs=2))
        steps = [0]
        stepper = threading.Thread(target=live_viewer.run, args=(scene, 2, stop, None, steps), daemon=True)
        stepper.start()
        deadline = time.monotonic() + 20
        while steps[0] < 5:
            if time.monotonic() > deadline:
                raise SystemExit("FAIL: the scene did not step")
            stop.wait(0.05)
        url = (f"http://127.0.0.1:{ui}/?token={TOKEN}&scene={live_viewer.SCENE}&sensor={live_viewer.SENSOR}"
               "&channel=force&env=1")
        chromium(browser, url, "--screenshot=" + shot)
        dom = chromium(browser, url, "--dump-dom")
        info = re.search(r'<span id="info">([^<]*)</span>', dom)
        text = info.group(1) if info else ""
        print(f"viewer_browser_test: page says: {text!r}; screenshot {shot}")
        m = re.search(r"step (\d+) · env 1 · \|force\| \[N\]", text)
        if not m or int(m.group(1)) < 5:
            raise SystemExit(f"FAIL: the page's status line {text!r} has no step >= 5, env 1 and |force| [N]")
        if re.search(r'<span id="error">[^<]+</span>', dom):
            raise SystemExit("FAIL: the page shows an error: " + re.search(r'<span id="error">([^<]+)', dom).group(1))
        check_pixels(shot)
    finally:
        stop.set()
        if stepper is not None:
            stepper.join(10)
        server.stop()
    print("viewer_browser_test: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
