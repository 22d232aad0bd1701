#!/usr/bin/env bash
# taxel-cli end to end: a real taxel-server on 127.0.0.1:0, every command, checked outputs.
# Usage: cli_test.sh TAXEL_SERVER TAXEL_CLI VERSION_FILE
set -euo pipefail
SERVER="$1"
CLI="$2"
VERSION_FILE="$3"
WORK="$(mktemp -d)"
LOG="$WORK/server.log"
"$SERVER" --address=127.0.0.1:0 --metrics_address= 2>"$LOG" &
PID=$!
cleanup() { kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
PORT=""
for _ in $(seq 1 100); do
  PORT="$(sed -n 's/.*event=server_started .* port=\([0-9]*\).*/\1/p' "$LOG" | head -n1)"
  [ -n "$PORT" ] && break
  sleep 0.05
done
[ -n "$PORT" ] || { echo "server did not start"; cat "$LOG"; exit 1; }
cli() { "$CLI" --target="127.0.0.1:$PORT" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }

# --help and an unknown command.
cli --help | grep -q "upload-mesh FILE.obj|FILE.stl" || fail "help text"
if cli frobnicate 2>"$WORK/err"; then fail "unknown command accepted"; fi
grep -q "unknown command 'frobnicate'" "$WORK/err" || fail "unknown command message"

# info: limits and capabilities.
cli info > "$WORK/info"
grep -q "max_message_bytes: 67108864" "$WORK/info" || fail "info limits"
grep -q 'capabilities: "sensor:kinematic_taxel"' "$WORK/info" || fail "info capabilities"

# upload-mesh: a unit cube (8 vertices, 12 triangles, outward) as OBJ; uploading twice gives the
# same content id.
cat > "$WORK/cube.obj" <<'OBJ'
# unit cube centred at the origin, half extent 0.05
v -0.05 -0.05 -0.05
v  0.05 -0.05 -0.05
v  0.05  0.05 -0.05
v -0.05  0.05 -0.05
v -0.05 -0.05  0.05
v  0.05 -0.05  0.05
v  0.05  0.05  0.05
v -0.05  0.05  0.05
f 1 3 2
f 1 4 3
f 5 6 7
f 5 7 8
f 1 2 6
f 1 6 5
f 2 3 7
f 2 7 6
f 3 4 8
f 3 8 7
f 4 1 5
f 4 5 8
OBJ
ID="$(cli upload-mesh "$WORK/cube.obj" 2>"$WORK/upload.err")"
[ ${#ID} -eq 64 ] || fail "mesh id '$ID'"
grep -q "8 vertices, 12 triangles, watertight=yes" "$WORK/upload.err" || fail "upload summary: $(cat "$WORK/upload.err")"
[ "$(cli upload-mesh "$WORK/cube.obj" 2>/dev/null)" = "$ID" ] || fail "second upload changed the id"

# create-scene from text format: a 3x3 pad (pitch 1 cm, R 2 mm) under the cube.
cat > "$WORK/scene.textproto" <<SPEC
name: "cli"
num_envs: 2
entities { name: "hand" kind: ROBOT links { name: "pad" } }
entities { name: "cube" kind: OBJECT links { name: "body" shapes { mesh { mesh_id: "$ID" } } } }
sensors {
  name: "depth" kind: CONTACT_DEPTH_PROBE link: "pad"
  probe_local_pos { dtype: FLOAT64 shape: [3, 3, 3] data: "" }
  probe_radius { dtype: FLOAT64 data: "" }
}
SPEC
# Fill the tensor bytes with python (little-endian float64).
/usr/bin/python3 - "$WORK/scene.textproto" <<'PY'
import struct, sys
path = sys.argv[1]
pts = [(0.01 * (j - 1), 0.01 * (i - 1), 0.0) for i in range(3) for j in range(3)]
def esc(b): return "".join("\\%03o" % c for c in b)
pos = esc(b"".join(struct.pack("<3d", *p) for p in pts))
rad = esc(struct.pack("<d", 0.002))
s = open(path).read()
s = s.replace('shape: [3, 3, 3] data: ""', 'shape: [3, 3, 3] data: "%s"' % pos, 1)
s = s.replace('probe_radius { dtype: FLOAT64 data: "" }', 'probe_radius { dtype: FLOAT64 data: "%s" }' % rad, 1)
open(path, "w").write(s)
PY
cli create-scene "$WORK/scene.textproto" > "$WORK/created"
grep -q 'moving_links: "hand/pad"' "$WORK/created" || fail "create-scene output"
grep -q 'shape: \[2, 3, 3\]' "$WORK/created" || fail "output shape [2, 3, 3]"
cli scenes | grep -qE "^cli +2 +1 +0" || fail "scenes listing"
# The same pad in JSON, tensors as plain lists of numbers (shape from the nesting).
cat > "$WORK/scene.json" <<SPEC
{"name": "cli_json", "num_envs": 1,
 "entities": [{"name": "hand", "kind": "ROBOT", "links": [{"name": "pad"}]}],
 "sensors": [{"name": "depth", "kind": "CONTACT_DEPTH_PROBE", "link": "pad",
              "probe_local_pos": {"data": [[[-0.01, -0.01, 0], [0, -0.01, 0]], [[-0.01, 0, 0], [0, 0, 0]]]},
              "probe_radius": {"data": 0.002}}]}
SPEC
cli create-scene "$WORK/scene.json" | grep -q 'shape: \[1, 2, 2\]' || fail "create-scene from JSON lists"
cli delete cli_json
sed -i 's/"data": 0.002/"data": [0.002, "x"]/' "$WORK/scene.json"
if cli create-scene "$WORK/scene.json" 2>"$WORK/err"; then fail "a string in a tensor list accepted"; fi
grep -q 'sensors\[0\].probe_radius.data\[1\]: expected a number, got "x"' "$WORK/err" || fail "JSON list error: $(cat "$WORK/err")"

# replay: 2 steps. Env 0: cube bottom face (z = c - 0.05) 1 mm below the pad plane, so every
# probe reads R + 1 mm = 3 mm; env 1: cube far away, 0. Identity quaternions (xyzw).
{
  echo "# step 1"
  echo "0 0 0 0 0 0 1  0 0 0.049 0 0 0 1   0 0 0 0 0 0 1  0 0 1 0 0 0 1"
  echo "0 0 0 0 0 0 1  0 0 0.049 0 0 0 1   0 0 0 0 0 0 1  0 0 1 0 0 0 1"
} > "$WORK/poses.txt"
# The quaternion order has no default: without it nothing is stepped.
if cli replay cli "$WORK/poses.txt" --dt=0.01 2>"$WORK/err"; then fail "replay without --quat_order accepted"; fi
grep -q -- "--quat_order is required: xyzw or wxyz" "$WORK/err" || fail "quat_order message: $(cat "$WORK/err")"
cli scenes | grep -qE "^cli +2 +1 +0 " || fail "a refused replay stepped: $(cli scenes)"
cli replay cli "$WORK/poses.txt" --dt=0.01 --quat_order=xyzw > "$WORK/replay"
[ "$(grep -c '^step ' "$WORK/replay")" -eq 2 ] || fail "replay steps: $(cat "$WORK/replay")"
grep -q "depth: max 0.003 (9 nonzero)" "$WORK/replay" || fail "replay summary: $(cat "$WORK/replay")"
cli replay cli "$WORK/poses.txt" --stream --quat_order=xyzw > /dev/null || fail "replay --stream"

# read: env 0 prints 3 rows of 0.003 and writes a PNG heatmap; env 1 reads zeros.
cli read cli --sensor=depth --channel=depth --env=0 --png="$WORK/depth.png" > "$WORK/read0"
[ "$(grep -cE '^ +0\.003 +0\.003 +0\.003$' "$WORK/read0")" -eq 3 ] || fail "read env 0: $(cat "$WORK/read0")"
head -c 8 "$WORK/depth.png" | od -An -tx1 | grep -q "89 50 4e 47 0d 0a 1a 0a" || fail "PNG signature"
# Decoded by Pillow: 3 x 3 cells of 16 px (48 px), bar 60 px tall (its minimum) so the grid sits
# 12 px down; every cell reads the maximum (white); the bar runs white (top) to black (bottom), at
# x = 48 + 12 gap; labels (white ink) right of it, from x = 48 + 12 + 16 + 6 = 82.
/usr/bin/python3 - "$WORK/depth.png" <<'PY' || fail "depth.png pixels"
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
assert im.size == (158, 60), im.size
px = im.load()
for x, y in [(8, 20), (40, 59), (24, 36)]:
    assert px[x, y] == (255, 255, 255), (x, y, px[x, y])
assert px[8, 5] == (64, 64, 64), px[8, 5]            # above the grid: background
assert px[65, 0] == (255, 255, 255) and px[65, 59] == (0, 0, 0), (px[65, 0], px[65, 59])
mid = px[65, 30]
assert mid[0] == 255 and 0 < mid[1] < 255, mid       # red-to-yellow in the middle
ink = sum(px[x, y] == (255, 255, 255) for x in range(82, 158) for y in range(60))
assert ink > 40, ink                                  # "0.003", "m" and "0"
PY
# Several grid channels: one file each (FILE's stem + .SENSOR.CHANNEL.png), none overwritten.
cli read cli --sensor=depth --env=0 --png="$WORK/all.png" > "$WORK/readall"
for ch in depth normal area; do
  [ -s "$WORK/all.depth.$ch.png" ] || fail "no all.depth.$ch.png: $(cat "$WORK/readall")"
done
cmp -s "$WORK/all.depth.depth.png" "$WORK/depth.png" || fail "the depth heatmap differs when read with the others"
cmp -s "$WORK/all.depth.depth.png" "$WORK/all.depth.area.png" && fail "area overwrote depth"
if cli read cli --sensor=depth --channel=contact --png="$WORK/c.png" 2>"$WORK/err"; then fail "png of a bool channel"; fi
grep -q -- "--png: no grid channel" "$WORK/err" || fail "png message: $(cat "$WORK/err")"
cli read cli --sensor=depth --channel=depth --env=1 > "$WORK/read1"
[ "$(grep -cE '^ +0 +0 +0$' "$WORK/read1")" -eq 3 ] || fail "read env 1: $(cat "$WORK/read1")"

# Errors name the field: wrong number of pose values; an env out of range.
echo "0 0 0 0 0 0 1" > "$WORK/bad.txt"
if cli step cli "$WORK/bad.txt" --quat_order=xyzw 2>"$WORK/err"; then fail "bad poses accepted"; fi
grep -q "expected a multiple of 14 numbers" "$WORK/err" || fail "bad poses message: $(cat "$WORK/err")"
if cli read cli --env=7 2>"$WORK/err"; then fail "env 7 accepted"; fi
grep -q "OUT_OF_RANGE: env_ids\[0\]: env id 7 out of range \[0, 2)" "$WORK/err" || fail "env message: $(cat "$WORK/err")"

# reset and delete; the cube mesh goes once its scene is gone.
if cli delete-mesh "$ID" 2>"$WORK/err"; then fail "delete-mesh of a mesh in use"; fi
grep -q "FAILED_PRECONDITION: mesh_id: mesh '$ID' is used by scene 'cli'" "$WORK/err" || fail "delete-mesh: $(cat "$WORK/err")"
cli reset cli 0
cli read cli --sensor=depth --channel=depth --env=0 | grep -qE '^ +0 +0 +0$' || fail "reset"
cli delete cli
if cli get cli 2>"$WORK/err"; then fail "deleted scene still there"; fi
grep -q "NOT_FOUND" "$WORK/err" || fail "delete"
cli delete-mesh "$ID" || fail "delete-mesh"
cli info | grep -q "^num_meshes" && fail "a mesh is left: $(cli info | grep num_meshes)"
if cli delete-mesh "$ID" 2>"$WORK/err"; then fail "deleted mesh deleted again"; fi
grep -q "NOT_FOUND: mesh_id: mesh '$ID' has not been uploaded" "$WORK/err" || fail "delete-mesh twice: $(cat "$WORK/err")"
# --version: the VERSION file's version, without a server.
[ "$("$CLI" --version)" = "taxel-cli $(cat "$VERSION_FILE")" ] || fail "--version: $("$CLI" --version)"

# import (MuJoCo) → bundle JSON → create-scene, which uploads the bundle's mesh. A URDF with a
# box base and a link carrying the cube above as a mesh; the humanoid of libmujoco-samples, feet
# and hands only. Skipped when this taxel-cli was built without MuJoCo.
if cli import "$WORK/none.xml" 2>&1 | grep -q "built without MuJoCo"; then
  echo "cli_test: import skipped (taxel-cli built without MuJoCo)"
else
  cat > "$WORK/cubebot.urdf" <<'URDF'
<robot name="cubebot">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.02"/></geometry></collision></link>
  <link name="cube">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><geometry><mesh filename="cube.obj"/></geometry></collision>
  </link>
  <joint name="lift" type="prismatic"><parent link="base"/><child link="cube"/><origin xyz="0 0 0.2"/>
    <axis xyz="0 0 1"/><limit lower="0" upper="1" effort="1" velocity="1"/></joint>
</robot>
URDF
  cli import "$WORK/cubebot.urdf" --entity bot --num_envs 2 > "$WORK/cubebot.json" || fail "import urdf"
  grep -q '"mesh_id": "' "$WORK/cubebot.json" || fail "import: no mesh in the bundle"
  cli create-scene "$WORK/cubebot.json" > "$WORK/created_bot"
  grep -q 'moving_links: "bot/cube"' "$WORK/created_bot" || fail "create-scene bundle: $(cat "$WORK/created_bot")"
  # An edited vertex no longer matches its content id.
  sed -i '0,/"vertices": \[/s//"vertices": [0.5, /' "$WORK/cubebot.json"
  sed -i 's/"name": "bot"/"name": "bot2"/' "$WORK/cubebot.json"
  if cli create-scene "$WORK/cubebot.json" 2>"$WORK/err"; then fail "edited mesh accepted"; fi
  grep -q "meshes\[0\]" "$WORK/err" || fail "edited mesh message: $(cat "$WORK/err")"
  cli import /usr/share/mujoco/model/humanoid/humanoid.xml --bodies '*_foot' --bodies='*_hand' > "$WORK/h.json"
  cli create-scene "$WORK/h.json" > "$WORK/created_h"
  for link in right_foot left_foot right_hand left_hand; do
    grep -q "moving_links: \"Humanoid/$link\"" "$WORK/created_h" || fail "humanoid: $link missing"
  done
  if cli import /usr/share/mujoco/model/humanoid/humanoid.xml --bodies 'tail*' 2>"$WORK/err"; then fail "bad glob"; fi
  grep -q -- "--bodies: 'tail\*' matches no body" "$WORK/err" || fail "bad glob message: $(cat "$WORK/err")"
  # --groups: the mug's mesh is a visual geom (group 1, contype 0), imported only when asked for.
  cli import /usr/share/mujoco/model/mug/mug.xml > "$WORK/mug.json"
  grep -q '"mesh_id"' "$WORK/mug.json" && fail "mug: visual mesh imported by default"
  cli import /usr/share/mujoco/model/mug/mug.xml --groups 1,3 > "$WORK/mug.json"
  grep -q '"mesh_id"' "$WORK/mug.json" || fail "mug: --groups 1,3 has no mesh"
  if cli import /usr/share/mujoco/model/mug/mug.xml --groups=one 2>"$WORK/err"; then fail "bad --groups"; fi
  grep -q -- "--groups: not an integer: 'one'" "$WORK/err" || fail "bad --groups message: $(cat "$WORK/err")"
  if cli import "$WORK/none.xml" 2>"$WORK/err"; then fail "missing file accepted"; fi
  grep -q "cannot load '$WORK/none.xml'" "$WORK/err" || fail "missing file message: $(cat "$WORK/err")"
fi
echo "cli_test: all commands passed"
