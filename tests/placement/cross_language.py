"""The three clients place the same scenes on the same replicas: the C++ (taxel-placement-dump),
Python (client/python/taxel/placement.py) and Node (client/node/placement.js) implementations
rank 100 scene names of four tenants over four replica ids, offline, and their outputs (ranking
and every score) must be identical line for line.

Usage: cross_language.py CPP_DUMP PYTHON_PLACEMENT_PY [NODE NODE_PLACEMENT_JS]
(without NODE the Node implementation is left out, and the script says so)."""
import subprocess
import sys

REPLICAS = ["taxel-0", "taxel-1", "taxel-2", "taxel-3"]
TENANTS = ["", "alice", "bob", "team-7"]


def scenes():
    names = [f"scene-{i:03d}" for i in range(96)]
    # A few that stress the byte handling: multi-byte UTF-8, a slash, a long name, a digit-only one.
    names += ["gr\u00fcn-\u624b", "a/b", "x" * 200, "0"]
    return [(TENANTS[i % len(TENANTS)], n) for i, n in enumerate(names)]


def run(cmd, text):
    out = subprocess.run(cmd, input=text.encode("utf-8"), stdout=subprocess.PIPE, check=True, timeout=60)
    return out.stdout.decode("utf-8")


def main(argv):
    if len(argv) not in (3, 5):
        print(__doc__, file=sys.stderr)
        return 2
    text = " ".join(REPLICAS) + "\n" + "".join(f"{t}\t{n}\n" for t, n in scenes())
    outputs = {"c++": run([argv[1]], text), "python": run([sys.executable, argv[2]], text)}
    if len(argv) == 5:
        outputs["node"] = run([argv[3], argv[4]], text)
    else:
        print("cross_language: node not found, comparing C++ and Python only")
    reference = outputs["python"].splitlines()
    assert len(reference) == 100, f"python printed {len(reference)} lines, expected 100"
    failed = False
    for lang, out in outputs.items():
        lines = out.splitlines()
        if lines != reference:
            failed = True
            diff = [(a, b) for a, b in zip(lines, reference) if a != b][:3]
            print(f"cross_language: {lang} differs from python ({len(lines)} lines); first differences: {diff}")
    homes = {}
    for line in reference:
        key, ranking, scores = line.split("\t")
        order = ranking.split(",")
        values = [int(s, 16) for s in scores.split(",")]
        assert sorted(order) == REPLICAS and values == sorted(values, reverse=True), line
        homes[order[0]] = homes.get(order[0], 0) + 1
    # 100 scenes over 4 replicas: Binomial(100, 1/4) each, 25 +- 13 (3 sigma).
    assert all(12 <= homes.get(r, 0) <= 38 for r in REPLICAS), homes
    if failed:
        return 1
    print(f"cross_language: {', '.join(outputs)} agree on 100 placements; homes {dict(sorted(homes.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
