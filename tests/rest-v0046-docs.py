#!/usr/bin/env python3
"""Derive slurmrestd data_parser v0.0.46 documents from a v0.0.44 capture.

Usage: tests/rest-v0046-docs.py [SRC_STATE [DEST_DIR]]
  default SRC_STATE: tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining
  default DEST_DIR:  tests/fixtures/slurmrestd-v0.0.46

No Slurm built from the development branch was at hand, so test_http_rest's test_rest_newer_versions
reads these: the real 25.11.7 answers (v0.0.44) of /nodes, /shares, /jobs, /diag and /jobs/state with the
changes applied that Slurm's src/plugins/data_parser/v0.0.45 (slurm-26-05-3-1) and v0.0.46
(master) make to what slurmrestd dumps in those documents (each field as data_parser dumps it):

  v0.0.44 -> v0.0.45
    node: "external_sensors", "power", "tres_weighted" (removed fields) are no longer dumped;
          "suspend_time" (UINT32_NO_VAL) is new, after "reservation";
          "reason_set_by_user" is "" when the node has no reason (NODE_REASON_USER_ID);
          "state" lists POWER_DOWN_ASAP beside POWER_DOWN and POWER_DRAIN, and
          POWER_DOWN_FORCE beside POWER_DOWN and POWERED_DOWN (new masked names).
    job:  "power" (removed "power/flags") is no longer dumped; "container_type" (string) is new;
          "memory_update_delay", "memory_update_margin" (UINT16) are new, after
          "memory_per_tres"; "shared" is a removed field (dumped empty).
    diag: "parts_packed" (removed since 25.11) is no longer dumped.
  v0.0.45 -> v0.0.46
    job:  "container_type" becomes "runtime" (after "resv_name").
  /jobs/state (rest_jobs_state.json): unchanged in both (JOB_STATE_RESP_JOB: job_id, state).
  both: meta.plugin.data_parser names the version; meta.slurm the release of the branch.

Checked against the real v0.0.45 answers of Slurm 26.05.3 (tests/fixtures/slurm-26.05-rest): the
same keys added and removed, suspend_time dumped as below, reason_set_by_user "" without a reason.
None of this touches a field the shim reads (docs/mapping.md lists them), which is what the test
checks: the same rows, served the same, as from the v0.0.44 originals. Output: DEST_DIR/rest_*.json
(JSON with 2-space indentation, as slurmrestd writes), byte-stable for the same input.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "fixtures/slurm-25.11-rest/R2-busy-mix-draining")
DEST = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "fixtures/slurmrestd-v0.0.46")
VERSION = "v0.0.46"
RELEASE = {"version": {"major": "26", "micro": "0", "minor": "11"}, "release": "26.11.0"}


def insert_after(d, anchor, key, value):
    """d with key: value placed right after anchor (at the end when anchor is absent)."""
    out, done = {}, False
    for k, v in d.items():
        out[k] = v
        if k == anchor:
            out[key] = value
            done = True
    if not done:
        out[key] = value
    return out


def meta(doc):
    m = doc.get("meta", {})
    m.setdefault("plugin", {})["data_parser"] = "data_parser/" + VERSION
    m["slurm"] = dict(RELEASE, cluster=m.get("slurm", {}).get("cluster", ""))
    return doc


def node(n):
    for k in ("external_sensors", "power", "tres_weighted"):
        n.pop(k, None)
    if not n.get("reason"):
        n["reason_set_by_user"] = ""
    state = list(n.get("state", []))
    if "POWER_DOWN" in state and "POWER_DRAIN" in state:
        state.append("POWER_DOWN_ASAP")
    if "POWER_DOWN" in state and "POWERED_DOWN" in state:
        state.append("POWER_DOWN_FORCE")
    n["state"] = state
    return insert_after(n, "reservation", "suspend_time", {"set": False, "infinite": True, "number": 0})


def job(j):
    j.pop("power", None)
    j = insert_after(j, "memory_per_tres", "memory_update_delay", 0)
    j = insert_after(j, "memory_update_delay", "memory_update_margin", 0)
    j = insert_after(j, "resv_name", "runtime", "")
    j["shared"] = []
    return j


def main():
    os.makedirs(DEST, exist_ok=True)
    for name in ("nodes", "shares", "jobs", "diag", "jobs_state"):
        with open(os.path.join(SRC, "rest_%s.json" % name)) as f:
            doc = json.load(f)
        if name == "nodes":
            doc["nodes"] = [node(n) for n in doc["nodes"]]
        elif name == "jobs":
            doc["jobs"] = [job(j) for j in doc["jobs"]]
        elif name == "diag":
            doc["statistics"].pop("parts_packed", None)
        with open(os.path.join(DEST, "rest_%s.json" % name), "w") as f:
            json.dump(meta(doc), f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
