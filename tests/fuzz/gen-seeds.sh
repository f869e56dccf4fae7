#!/bin/sh
# gen-seeds.sh: (re)build the fuzzers' seed corpora and fixed payload from the test fixtures.
#
#   tests/fuzz/corpus/expo/       every distinct tests/fixtures/**/metrics_*.txt (named by SHA-1, as
#                           libFuzzer names its corpus files)
#   tests/fuzz/corpus/mapping/    the shipped mapping, a few one-row mappings cut from it, a small native catalog (validated_on), and the deep and
#                           long ones (at and past the depth limits, a long chain)
#   tests/fuzz/corpus/expr/       every distinct expression of the shipped mapping, and deep ones
#   tests/fuzz/corpus/webconfig/  tests/webconfig/**/*.yml
#   tests/fuzz/corpus/native/     the first 40 lines of each endpoint of slurm-25.11/03-drain-down-cancel
#                           (jobs-users-accts from its account odd"acct\\x y on) and a short
#                           answer of hostile label values and HELP texts, each behind a line
#                           "b 1" .. "h 1" whose first byte picks the piece size fuzz_native feeds
#   tests/fuzz/corpus/probe/      tests/fixtures/probe/*.yml
#   tests/fuzz/corpus/accept/     every Accept-Encoding field of tests/test_encoding.c's table, and a few
#                           requests of several field lines ('\n' between them)
#   tests/fuzz/corpus/restjson/   each of slurmrestd's documents of every slurm-25.11-rest state (the
#                           jobs cut to their first two, the shares to their first four rows), the
#                           nodes and jobs of R2 with their keys sorted ({set, infinite, number} in
#                           any order), and hostile shapes: not objects, items that are not
#                           objects, slurmrestd's errors, records and keys given twice, a node in 100
#                           partitions, strings of 5,000 bytes (escapes, UTF-8) in fields nothing
#                           reads and in one it reads, a uid that is no uid; each behind a selector
#                           byte (the document, 0 nodes .. 3 diag, 4 licenses, 5 jobs/state,
#                           6 reservations, 7 associations, plus 8 x a piece size); /reservations' shapes (flags out of
#                           scontrol's order, PURGE_COMP's time, a host list, last_update before and
#                           after, twice, missing; a reservation twice or without a name, host lists
#                           too long or not closed); /jobs/state's bad answers (a job without a state or a job_id, a
#                           state name no data_parser writes, a job twice, errors set); /associations'
#                           (P8's answer; limits in complex mode's forms, TRES counts -1, 2^53 and past it,
#                           a TRES or an association twice, wrong types, a list that is no array); and
#                           behind 240..247 and 248..255 (the value % 8 the document), answers whose '~' fuzz_restjson makes
#                           70,001 and 393,223 bytes (past REST_MAX_STRING, past jsonfeed's cut: in
#                           fields read and unread, in a key)
#   tests/fuzz/fuzz_payload.h     a small exposition per endpoint (the first three samples of every family
#                           the mapping reads, from slurm-26.05/02-busy-gpu, plus a few short generic
#                           families), that fuzz_expr and fuzz_mapping evaluate against
#
# Run from anywhere; needs python3. The output is committed; rerun it when the fixtures change.
set -eu
cd "$(dirname "$0")/../.."
exec python3 - <<'EOF'
import collections, glob, hashlib, json, os, re, shutil

def reset(d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)

def put(d, data):
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), 'wb') as f:
        f.write(data)

MAP = 'mappings/prometheus-slurm-exporter.json'

reset('tests/fuzz/corpus/expo')
for p in sorted(glob.glob('tests/fixtures/**/metrics_*.txt', recursive=True)):
    put('tests/fuzz/corpus/expo', open(p, 'rb').read())

reset('tests/fuzz/corpus/mapping')
put('tests/fuzz/corpus/mapping', open(MAP, 'rb').read())
table = json.load(open(MAP))
rows = table['metrics']
picks = [0, 4, next(i for i, r in enumerate(rows) if r.get('rename_labels')),
         next(i for i, r in enumerate(rows) if r.get('enabled_by')),
         next(i for i, r in enumerate(rows) if r.get('fidelity') == 'unavailable')]
for i in sorted(set(picks)):
    one = dict(table, metrics=[rows[i]])
    put('tests/fuzz/corpus/mapping', (json.dumps(one, indent=2) + '\n').encode())

# a small "validated_on" (the native catalog, src/mapping_catalog.c): two releases, a family on the wrong
# endpoint and a row reading a family no release lists are problems the fuzzer can reach from it
put('tests/fuzz/corpus/mapping', (json.dumps({'validated_on': {
    '25.11': {'nodes': [{'family': 'slurm_node_cpus', 'type': 'gauge', 'labels': ['node']}],
              'jobs': [{'family': 'slurm_jobs', 'type': 'gauge', 'labels': []}]},
    '26.05': {'nodes': [{'family': 'slurm_node_cpus', 'type': 'gauge', 'labels': ['node']},
                        {'family': 'slurm_node_gpus', 'type': 'gauge', 'labels': ['node']}]}},
    'metrics': [{'name': 'a', 'help': 'h', 'type': 'gauge', 'fidelity': 'exact',
                 'expr': 'sum(slurm_node_cpus) + sum(slurm_node_gpus)'}]}) + '\n').encode())

# expressions at and past the depth limits (src/expr.h: a tree 128 deep, parsing nested
# 258 deep), long chains, many rows
def J(exprs):
    return (json.dumps({'metrics': [{'name': 'a%d' % i, 'help': 'h', 'type': 'gauge', 'fidelity': 'approximate',
                                     'note': 'n', 'expr': e} for i, e in enumerate(exprs)]}) + '\n').encode()
def nest(o, c, n, leaf='slurm_node_cpus'):
    return o * n + leaf + c * n
def chain(n, leaf='slurm_node_cpus'):
    return ' + '.join([leaf] * n)
deep = [nest('(', ')', 257), nest('(', ')', 258), nest('-', '', 127), nest('-', '', 128), nest('sum(', ')', 127),
        nest('sum(', ')', 128), chain(128), chain(129), nest('abs(', ')', 127),
        nest('clamp_min(', ', 1)', 127), 'x' + ' - (x' * 127 + ')' * 127]
for e in deep:
    put('tests/fuzz/corpus/mapping', J([e]))
# (smaller than the 100,000 levels and 8,000 terms once reported, which fail the same way: libFuzzer's
# inputs grow to the largest seed, and every execution would be slow)
put('tests/fuzz/corpus/mapping', J([nest('(', ')', 5000)]))
put('tests/fuzz/corpus/mapping', J([nest('sum(', ')', 2000)]))
put('tests/fuzz/corpus/mapping', J([chain(2000)]))
put('tests/fuzz/corpus/mapping', J(['(sum(a%d) + sum(b{l="%d"})) / count(c)' % (i % 7, i) for i in range(500)]))

reset('tests/fuzz/corpus/expr')
for r in rows:
    if r.get('expr'):
        put('tests/fuzz/corpus/expr', r['expr'].encode())
for e in deep + [nest('(', ')', 1000, 'a'), chain(1000, 'a')]:
    put('tests/fuzz/corpus/expr', e.encode())

reset('tests/fuzz/corpus/webconfig')
for p in sorted(glob.glob('tests/webconfig/**/*.yml', recursive=True)):
    put('tests/fuzz/corpus/webconfig', open(p, 'rb').read())

# fuzz_native: slurmctld answers, small; the first byte picks the piece size (7 choices), so each
# seed starts with a one-sample family b .. h (ASCII 98 .. 104: every choice appears)
reset('tests/fuzz/corpus/native')
NATIVE = 'tests/fixtures/slurm-25.11/03-drain-down-cancel'
for i, ep in enumerate(['jobs', 'nodes', 'partitions', 'scheduler', 'jobs-users-accts']):
    lines = open(f'{NATIVE}/metrics_{ep}.txt', 'rb').read().split(b'\n')
    if ep == 'jobs-users-accts':
        start = next(k for k, l in enumerate(lines) if b'odd' in l)
        lines = lines[start - 2:]
    body = b'\n'.join(lines[:40]) + b'\n'
    put('tests/fuzz/corpus/native', bytes([ord('b') + i]) + b' 1\n' + body)
hostile = (b'# HELP a_jobs Jobs with a \\ and \xfe in the help\r\n# TYPE a_jobs gauge\n'
           b'a_jobs{account="odd"acct\\\\x y",user="bad\xff\xc0name"} 3\n'
           b'a_jobs{account="plain",user=""} NaN\n# TYPE b_total counter\nb_total 1.5e+300 17\n'
           b'c_untyped {x="ends in \\"} -0\n# TYPE d info\nd{q="\\n",r="x\ty"} -Inf\n# EOF\n')
for i in range(7):
    put('tests/fuzz/corpus/native', bytes([ord('b') + i]) + b' 1\n' + hostile)

reset('tests/fuzz/corpus/probe')
for p in sorted(glob.glob('tests/fixtures/probe/*.yml')):
    put('tests/fuzz/corpus/probe', open(p, 'rb').read())

# fuzz_accept: the negotiation table's fields (C string literals: \t, \r, \n, \", \xNN), one seed each
reset('tests/fuzz/corpus/accept')
for lit in re.findall(r'^\t\{ "((?:[^"\\]|\\.)*)", [GI] \},$', open('tests/test_encoding.c').read(), re.M):
    put('tests/fuzz/corpus/accept', lit.encode('latin-1').decode('unicode_escape').encode('latin-1'))
for lines in (['br', 'gzip'], ['gzip', 'gzip;q=0'], ['*;q=0', 'identity;q=0.5', 'x-gzip;q=0.4'], ['', 'gzip']):
    put('tests/fuzz/corpus/accept', '\n'.join(lines).encode())
# fuzz_restjson: the first byte picks the document (its value % 8, enum rest_doc's order) and the piece size
reset('tests/fuzz/corpus/restjson')
REST = 'tests/fixtures/slurm-25.11-rest'
DOCS = ['nodes', 'shares', 'jobs', 'diag', 'licenses', 'jobs_state', 'reservations', 'associations']
def rest_seed(doc, k, body):  # selectors under 240 (8 * 29 + 7 = 239)
    put('tests/fuzz/corpus/restjson', bytes([DOCS.index(doc) + len(DOCS) * (k % 30)]) + body.encode())
for i, st in enumerate(sorted(glob.glob(REST + '/R[0-9]*'))):
    for doc in DOCS:
        if not os.path.exists(f'{st}/rest_{doc}.json'):  # /licenses: no capture of these states
            continue
        text = open(f'{st}/rest_{doc}.json').read()
        if doc in ('jobs', 'shares'):
            j = json.loads(text)
            if doc == 'jobs':
                j['jobs'] = j['jobs'][:2]
            else:
                j['shares']['shares'] = j['shares']['shares'][:4]
            text = json.dumps(j, indent=2)
        rest_seed(doc, 7 * i + DOCS.index(doc), text)
rest_seed('reservations', 2, open('tests/fixtures/peers-25.11/P4-licenses-gpu-full/rest_reservations.json').read())
rest_seed('associations', 3, open('tests/fixtures/peers-25.11/P8-account-limits/rest_associations.json').read())
R2 = REST + '/R2-busy-mix-draining'
rest_seed('nodes', 3, json.dumps(json.load(open(R2 + '/rest_nodes.json')), sort_keys=True))
jobs = json.load(open(R2 + '/rest_jobs.json'))
jobs['jobs'] = jobs['jobs'][:2]
rest_seed('jobs', 5, json.dumps(jobs, sort_keys=True))
node = '{"name": "n1", "cpus": 4, "partitions": ["a"]}'
job = '{"job_id": 7, "job_state": ["PENDING"], "user_name": "u", "cpus": {"infinite": false, "number": 2, "set": true}}'
long_text = (r'ab\n\u00e9\ud83d\ude00\"' + '\u00e9' + 'x' * 40) * 80  # 5,000 bytes: escapes, UTF-8
shapes = [
    ('jobs', '{}'), ('jobs', '{"jobs": null}'), ('jobs', '{"jobs": {}}'), ('jobs', '[]'), ('shares', '{"shares": {}}'),
    ('jobs', '{"jobs": [%s, 3, "x", null, [], true]}' % job),
    ('nodes', '{"nodes": [], "errors": [{"error": "Invalid", "description": "auth \\"x\\"\\n"}, "boom", 3]}'),
    ('nodes', '{"nodes": [%s, %s]}' % (node, node)),
    ('nodes', '{"nodes": [%s], "nodes": [%s]}' % (node, node)),
    ('nodes', '{"nodes": [{"name": "n1", "cpus": 4, "name": "n2", "cpus": {"number": 1, "number": 2}}]}'),
    ('nodes', '{"nodes": [{"name": "n1", "cpus": 4, "partitions": [%s]}]}' % ', '.join('"p%d"' % k for k in range(100))),
    ('diag', '{"statistics": {"a": 1, "a": 2, "b": {"set": false, "number": 3}, "c": {"number": 4, "infinite": true}}}'),
    ('jobs', '{"jobs": [{"comment": "%s", "job_state": "RUNNING", "user_name": "", "user_id": -1e300}]}' % long_text),
    ('jobs', '{"jobs": [{"user_name": "%s", "job_state": "RUNNING", "job_id": 1}, {"job_id": 1, "job_state": "PENDING"}]}' % ('u' * 5000)),
    ('shares', '{"shares": {"shares": [{"name": "a", "fairshare": {"level": {"number": 0, "set": true, "infinite": true}}},'
               ' {"name": "a"}]}}'),
    ('jobs_state', '{"jobs": [{"job_id": "1", "state": []}, {"state": ["PENDING"]}]}'),
    ('jobs_state', '{"jobs": [{"job_id": "16_8", "state": ["PENDING", "HIBERNATING"]}]}'),
    ('jobs_state', '{"jobs": [{"job_id": "2+1", "state": ["CANCELLED", "COMPLETING", "END"]}, {"job_id": "2+1", "state": "RUNNING"}]}'),
    ('jobs_state', '{"jobs": [{"job_id": 7, "state": ["RUNNING"], "state": ["RUNNING"]}], "errors": [{"error": "Unable to query jobs"}]}'),
    ('jobs_state', '{"jobs": [{"job_id": "1", "state": ["RUNNING", "LAUNCH_FAILED", "POWER_UP_NODE", "RECONFIG_FAIL"]}, 3]}'),
    ('reservations', '{"reservations": [{"name": "r", "flags": ["SPEC_NODES", "PURGE_COMP", "NEW", "MAINT"],'
                     ' "purge_completed": {"time": {"number": 90061, "set": true}}, "node_list": "n[1-3,05],gpu01",'
                     ' "start_time": {"set": true, "number": 5}, "end_time": 9, "node_count": 4294967294}],'
                     ' "last_update": {"infinite": false, "number": 7, "set": true}}'),
    ('reservations', '{"last_update": 5, "reservations": [{"name": "r"}, {"name": "r"}, {"users": "u"}, 3]}'),
    ('reservations', '{"reservations": [{"name": "r", "node_list": "n[1-70000]"}, {"name": "s", "node_list": "n[1-3"}]}'),
    ('reservations', '{"reservations": [], "last_update": 5, "last_update": {"number": 1, "number": 2}, "errors": ["x"]}'),
    ('associations', '{"associations": [{"account": "a", "user": "", "cluster": "c", "max": {"jobs": {"per": {"count": "Infinity",'
                     ' "submitted": null}}, "tres": {"total": [{"count": 9007199254740992, "type": "cpu"}, {"type": "mem",'
                     ' "count": -1}, {"type": "gres", "name": "gpu", "count": 0}], "group": {"active": [{"count": "x"}]}}}},'
                     ' {"account": "a", "user": "u", "partition": "p", "max": {"jobs": {"per": {"count": {"number": 3, "set": true}}}}}]}'),
    ('associations', '{"associations": [{"account": "a", "user": ""}, {"account": "a", "user": ""}, {"user": "u"}, 3],'
                     ' "warnings": [{"description": "found nothing"}]}'),
    ('associations', '{"associations": [{"account": "a", "user": "", "max": {"tres": {"total": [{"type": "cpu", "count": 1},'
                     ' {"type": "cpu", "count": 1.5}, {"count": 2}, 4]}}}], "errors": [{"error": "slurmdbd down"}]}'),
    ('associations', '{"associations": [{"account": "a", "user": "", "max": {"tres": {"total": "cpu=4"}, "jobs": {"per":'
                     ' {"count": {"number": 1e300, "set": true}, "submitted": "10"}}}}]}'),
]
for k, (doc, body) in enumerate(shapes):
    rest_seed(doc, 11 * k + 1, body)
# selector 240 + doc: each '~' becomes 70,001 bytes (fuzz_restjson.c), past
# REST_MAX_STRING; 246 + doc: 393,223 bytes, past jsonfeed's cut: skipped in a
# field nothing reads, refused in a read one, refused with a bad escape after the cut
long_shapes = [
    ('jobs', '{"jobs": [{"comment": "~", "job_state": ["PENDING"], "user_name": "u", "cpus": 2}, {"job_state": "RUNNING"}]}'),
    ('jobs', '{"jobs": [{"user_name": "~", "job_state": "RUNNING"}]}'),
    ('jobs', '{"jobs": [{"comment": "~\\x", "job_state": "RUNNING"}]}'),
    ('nodes', '{"nodes": [{"name": "n1", "extra": "~", "cpus": 4, "~": 1, "partitions": ["a"]}]}'),
    ('jobs_state', '{"jobs": [{"job_id": "~", "state": ["PENDING"]}, {"job_id": "2", "x": "~", "state": ["RUNNING"]}]}'),
    ('reservations', '{"reservations": [{"name": "~", "flags": ["MAINT"]}, {"name": "s", "comment": "~"}], "last_update": 5}'),
    ('associations', '{"associations": [{"account": "~", "user": ""}, {"account": "b", "user": "", "comment": "~",'
                     ' "max": {"tres": {"total": [{"type": "license", "name": "~", "count": 1}]}}}]}'),
]
for doc, body in long_shapes:
    for lo, hi in ((240, 247), (248, 255)):  # the selector in each range whose value % 8 is the document
        sel = next(v for v in range(lo, hi + 1) if v % len(DOCS) == DOCS.index(doc))
        put('tests/fuzz/corpus/restjson', bytes([sel]) + body.encode())

# the fixed payload
names = set()
for r in rows:
    names.update(re.findall(r'\bslurm_[a-zA-Z0-9_:]+', r.get('expr') or ''))
def endpoint(n):  # src/source.c source_for_metric()
    for p, e in (('slurm_partition', 'SRC_PARTITIONS'), ('slurm_node_', 'SRC_NODES'), ('slurm_nodes', 'SRC_NODES'),
                 ('slurm_user_', 'SRC_UA'), ('slurm_account_', 'SRC_UA'), ('slurm_jobs', 'SRC_JOBS')):
        if n.startswith(p):
            return e
    return 'SRC_SCHEDULER'
files = {'SRC_JOBS': 'jobs', 'SRC_NODES': 'nodes', 'SRC_PARTITIONS': 'partitions', 'SRC_SCHEDULER': 'scheduler',
         'SRC_UA': 'jobs-users-accts'}
payload = collections.defaultdict(list)
for ep, f in files.items():
    seen = collections.Counter()
    for line in open(f'tests/fixtures/slurm-26.05/02-busy-gpu/metrics_{f}.txt'):
        m = re.match(r'[a-zA-Z_:][a-zA-Z0-9_:]*', line)
        if line.startswith('#') or not m or m.group(0) not in names or seen[m.group(0)] >= 3:
            continue
        seen[m.group(0)] += 1
        payload[endpoint(m.group(0))].append(line)
payload['SRC_SCHEDULER'] += ['a{l="1"} 1\n', 'a{l="2"} 2\n', 'a{l="3",m="x"} NaN\n', 'b{l="1"} 3\n', 'b 4\n',
                            'c -Inf\n', 'd{l="1"} 1\n', 'd{l="1"} 2\n']
def cstr(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n') + '"'
with open('tests/fuzz/fuzz_payload.h', 'w') as out:
    out.write('''/* fuzz_payload.h: a small fixed exposition per endpoint that fuzz_expr and fuzz_mapping evaluate
 * against. Generated by tests/fuzz/gen-seeds.sh (the first three samples of every family the shipped mapping
 * reads, from tests/fixtures/slurm-26.05/02-busy-gpu, plus short generic families a, b, c and d, whose
 * family d is a duplicate series); do not edit by hand.
 * Ownership: fuzz_payload_parse fills expos that borrow these strings; free them with expo_free. */
#ifndef SHIM_FUZZ_PAYLOAD_H
#define SHIM_FUZZ_PAYLOAD_H

#include <string.h>

#include "source.h"
#include "expo.h"

static const char *const fuzz_payload[SRC_COUNT] = {
''')
    for ep in files:
        out.write(f'\t[{ep}] =\n')
        for line in payload[ep]:
            out.write(f'\t\t{cstr(line)}\n')
        out.write('\t\t"",\n')
    out.write('''};

static inline void fuzz_payload_parse(struct expo e[SRC_COUNT])
{
	for (int i = 0; i < SRC_COUNT; i++) {
		expo_init(&e[i]);
		if (fuzz_payload[i]) /* slurmrestd sources: an empty expo */
			expo_parse(&e[i], fuzz_payload[i], strlen(fuzz_payload[i]), 0);
	}
}

#endif
''')
for d in sorted(glob.glob('tests/fuzz/corpus/*')):
    print(d, len(os.listdir(d)), 'files')
EOF
