#!/usr/bin/env python3
"""Prints deploy/k8s/base/prometheusrule.yaml: the groups of deploy/prometheus/rules.yml wrapped in
a prometheus-operator PrometheusRule. Needs python3-yaml.

    python3 deploy/prometheus/make_prometheusrule.py > deploy/k8s/base/prometheusrule.yaml
"""
import os
import sys

import yaml

HEADER = """\
# GENERATED from deploy/prometheus/rules.yml by deploy/prometheus/make_prometheusrule.py: edit
# that file and regenerate (the deploy test fails when this one differs).
"""


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (the longer expressions) as literal blocks, as in rules.yml."""


def _str(dumper, value):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "rules.yml"), encoding="utf-8") as f:
        rules = yaml.safe_load(f)
    doc = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "taxel"},
        "spec": {"groups": rules["groups"]},
    }
    sys.stdout.write(HEADER)
    sys.stdout.write(yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=200, allow_unicode=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
