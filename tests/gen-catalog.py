#!/usr/bin/env python3
"""Write the mapping table's "validated_on" catalog from the real slurmctld captures.

    tests/gen-catalog.py            rewrite mappings/prometheus-slurm-exporter.json's "validated_on"
    tests/gen-catalog.py --check    exit 1 if the shipped catalog is not what the captures give

"validated_on" records, per Slurm release the table was validated on, every family slurmctld served
on each of its five metrics endpoints: its name, TYPE and label names (docs/mapping.md, "The native
catalog"). It is read from the captures only (tests/fixtures/<dir>/**/metrics_<endpoint>.txt, each a
slurmctld answer as it came), so it says what a real slurmctld of that release served, and the shim
compares every scrape's answers with it (docs/operations.md, "Upgrading Slurm"). A release's
families on an endpoint are the union over its captures; an answer naming no family (no job in
memory, PrivateData) adds nothing. Only the "validated_on" block of the file is rewritten: the rows
and their formatting stay as they are.
"""
import glob, json, os, re, sys

MAPPING = "mappings/prometheus-slurm-exporter.json"
# fixture directory -> the Slurm release its captures come from (each directory's README.md)
RELEASES = {
    "tests/fixtures/slurm-25.11": "25.11",       # slurmctld 25.11.7
    "tests/fixtures/slurm-25.11-rest": "25.11",  # slurmctld 25.11.7, with slurmrestd
    "tests/fixtures/slurm-26.05": "26.05",       # slurmctld 26.05.3
    "tests/fixtures/slurm-26.05-rest": "26.05",  # slurmctld 26.05.3, with slurmrestd
}
ENDPOINTS = ["jobs", "nodes", "partitions", "scheduler", "jobs-users-accts"]  # src/source.c's names
TYPE_RE = re.compile(r"# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\S+)")
SAMPLE_RE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s")
LABEL_RE = re.compile(r'(?:^|,)([a-zA-Z_][a-zA-Z0-9_]*)="')


def read_answer(path, fams):
    """Add the families of one slurmctld answer to fams: name -> [type, set of label names]."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = TYPE_RE.match(line)
            if m:
                fams.setdefault(m.group(1), ["untyped", set()])[0] = m.group(2)
                continue
            if line.startswith("#") or not line.strip():
                continue
            m = SAMPLE_RE.match(line)
            if not m:
                sys.exit(f"{path}: cannot read {line!r}")
            fam = fams.setdefault(m.group(1), ["untyped", set()])
            if m.group(2):  # slurmctld does not escape label values: take the names where they start
                fam[1].update(LABEL_RE.findall(m.group(2)))


def catalog():
    cat = {}
    for d, rel in RELEASES.items():
        for ep in ENDPOINTS:
            fams = cat.setdefault(rel, {}).setdefault(ep, {})
            for path in sorted(glob.glob(f"{d}/**/metrics_{ep}.txt", recursive=True)):
                read_answer(path, fams)
    return cat


def block(cat):
    """The "validated_on" member as the file holds it: one family a line."""
    out = ['  "validated_on": {']
    for ri, rel in enumerate(sorted(cat)):
        out.append(f'    "{rel}": {{')
        eps = [ep for ep in ENDPOINTS if cat[rel][ep]]
        for ei, ep in enumerate(eps):
            out.append(f'      "{ep}": [')
            names = sorted(cat[rel][ep])
            for fi, name in enumerate(names):
                typ, labels = cat[rel][ep][name]
                entry = json.dumps({"family": name, "type": typ, "labels": sorted(labels)})
                out.append(f"        {entry}{',' if fi + 1 < len(names) else ''}")
            out.append(f"      ]{',' if ei + 1 < len(eps) else ''}")
        out.append(f"    }}{',' if ri + 1 < len(cat) else ''}")
    out.append("  },")
    return "\n".join(out) + "\n"


def rewrite(text, cat):
    """text with its "validated_on" member replaced by (or given) the catalog, just before "metrics"."""
    start = text.find('  "validated_on": {\n')
    end = text.find('  "metrics": [')
    if end < 0:
        sys.exit(f'{MAPPING}: no "metrics" member at the top level')
    if start < 0 or start > end:
        start = end
    return text[:start] + block(cat) + text[end:]


def main():
    text = open(MAPPING, encoding="utf-8").read()
    new = rewrite(text, catalog())
    if json.loads(new)["metrics"] != json.loads(text)["metrics"]:
        sys.exit("internal error: the rows would change")
    if "--check" in sys.argv[1:]:
        if new != text:
            sys.stderr.write(f'{MAPPING}: "validated_on" is not what the captures give: run tests/gen-catalog.py\n')
            sys.exit(1)
        return
    with open(MAPPING, "w", encoding="utf-8") as f:
        f.write(new)


if __name__ == "__main__":
    main()
