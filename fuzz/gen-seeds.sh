#!/bin/sh
# gen-seeds.sh: (re)build the fuzzers' seed corpora and fixed payload from the test fixtures.
#
#   fuzz/corpus/expo/       every distinct tests/fixtures/**/metrics_*.txt (named by SHA-1, as
#                           libFuzzer names its corpus files)
#   fuzz/corpus/mapping/    the shipped mapping, a few one-row mappings cut from it, and the deep and
#                           long ones (at and past the depth limits, a long chain)
#   fuzz/corpus/expr/       every distinct expression of the shipped mapping, and deep ones
#   fuzz/corpus/webconfig/  tests/webconfig/**/*.yml
#   fuzz/corpus/native/     the first 40 lines of each endpoint of slurm-25.11/03-drain-down-cancel
#                           (jobs-users-accts from its account odd"acct\\x y on) and a short
#                           answer of hostile label values and HELP texts, each behind a line
#                           "b 1" .. "h 1" whose first byte picks the piece size fuzz_native feeds
#   fuzz/corpus/probe/      tests/fixtures/probe/*.yml
#   fuzz/corpus/accept/     every Accept-Encoding field of tests/test_encoding.c's table, and a few
#                           requests of several field lines ('\n' between them)
#   fuzz/fuzz_payload.h     a small exposition per endpoint (the first three samples of every family
#                           the mapping reads, from slurm-26.05/02-busy-gpu, plus a few short generic
#                           families), that fuzz_expr and fuzz_mapping evaluate against
#
# Run from anywhere; needs python3. The output is committed; rerun it when the fixtures change.
set -eu
cd "$(dirname "$0")/.."
exec python3 - <<'EOF'
import collections, glob, hashlib, json, os, re, shutil

def reset(d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)

def put(d, data):
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), 'wb') as f:
        f.write(data)

MAP = 'mappings/prometheus-slurm-exporter.json'

reset('fuzz/corpus/expo')
for p in sorted(glob.glob('tests/fixtures/**/metrics_*.txt', recursive=True)):
    put('fuzz/corpus/expo', open(p, 'rb').read())

reset('fuzz/corpus/mapping')
put('fuzz/corpus/mapping', open(MAP, 'rb').read())
table = json.load(open(MAP))
rows = table['metrics']
picks = [0, 4, next(i for i, r in enumerate(rows) if r.get('rename_labels')),
         next(i for i, r in enumerate(rows) if r.get('enabled_by')),
         next(i for i, r in enumerate(rows) if r.get('fidelity') == 'unavailable')]
for i in sorted(set(picks)):
    one = dict(table, metrics=[rows[i]])
    put('fuzz/corpus/mapping', (json.dumps(one, indent=2) + '\n').encode())

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
    put('fuzz/corpus/mapping', J([e]))
# (smaller than the 100,000 levels and 8,000 terms once reported, which fail the same way: libFuzzer's
# inputs grow to the largest seed, and every execution would be slow)
put('fuzz/corpus/mapping', J([nest('(', ')', 5000)]))
put('fuzz/corpus/mapping', J([nest('sum(', ')', 2000)]))
put('fuzz/corpus/mapping', J([chain(2000)]))
put('fuzz/corpus/mapping', J(['(sum(a%d) + sum(b{l="%d"})) / count(c)' % (i % 7, i) for i in range(500)]))

reset('fuzz/corpus/expr')
for r in rows:
    if r.get('expr'):
        put('fuzz/corpus/expr', r['expr'].encode())
for e in deep + [nest('(', ')', 1000, 'a'), chain(1000, 'a')]:
    put('fuzz/corpus/expr', e.encode())

reset('fuzz/corpus/webconfig')
for p in sorted(glob.glob('tests/webconfig/**/*.yml', recursive=True)):
    put('fuzz/corpus/webconfig', open(p, 'rb').read())

# fuzz_native: slurmctld answers, small; the first byte picks the piece size (7 choices), so each
# seed starts with a one-sample family b .. h (ASCII 98 .. 104: every choice appears)
reset('fuzz/corpus/native')
NATIVE = 'tests/fixtures/slurm-25.11/03-drain-down-cancel'
for i, ep in enumerate(['jobs', 'nodes', 'partitions', 'scheduler', 'jobs-users-accts']):
    lines = open(f'{NATIVE}/metrics_{ep}.txt', 'rb').read().split(b'\n')
    if ep == 'jobs-users-accts':
        start = next(k for k, l in enumerate(lines) if b'odd' in l)
        lines = lines[start - 2:]
    body = b'\n'.join(lines[:40]) + b'\n'
    put('fuzz/corpus/native', bytes([ord('b') + i]) + b' 1\n' + body)
hostile = (b'# HELP a_jobs Jobs with a \\ and \xfe in the help\r\n# TYPE a_jobs gauge\n'
           b'a_jobs{account="odd"acct\\\\x y",user="bad\xff\xc0name"} 3\n'
           b'a_jobs{account="plain",user=""} NaN\n# TYPE b_total counter\nb_total 1.5e+300 17\n'
           b'c_untyped {x="ends in \\"} -0\n# TYPE d info\nd{q="\\n",r="x\ty"} -Inf\n# EOF\n')
for i in range(7):
    put('fuzz/corpus/native', bytes([ord('b') + i]) + b' 1\n' + hostile)

reset('fuzz/corpus/probe')
for p in sorted(glob.glob('tests/fixtures/probe/*.yml')):
    put('fuzz/corpus/probe', open(p, 'rb').read())

# fuzz_accept: the negotiation table's fields (C string literals: \t, \r, \n, \", \xNN), one seed each
reset('fuzz/corpus/accept')
for lit in re.findall(r'^\t\{ "((?:[^"\\]|\\.)*)", [GI] \},$', open('tests/test_encoding.c').read(), re.M):
    put('fuzz/corpus/accept', lit.encode('latin-1').decode('unicode_escape').encode('latin-1'))
for lines in (['br', 'gzip'], ['gzip', 'gzip;q=0'], ['*;q=0', 'identity;q=0.5', 'x-gzip;q=0.4'], ['', 'gzip']):
    put('fuzz/corpus/accept', '\n'.join(lines).encode())

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
with open('fuzz/fuzz_payload.h', 'w') as out:
    out.write('''/* fuzz_payload.h: a small fixed exposition per endpoint that fuzz_expr and fuzz_mapping evaluate
 * against. Generated by fuzz/gen-seeds.sh (the first three samples of every family the shipped mapping
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
for d in sorted(glob.glob('fuzz/corpus/*')):
    print(d, len(os.listdir(d)), 'files')
EOF
