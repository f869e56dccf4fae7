#!/usr/bin/env python3
"""gen_rest.py: generate large slurmrestd answers for the JSON converter's figures
(docs/performance.md, "slurmrestd JSON").

  tests/bench/gen_rest.py jobs  N OUT   N jobs, each a copy of a real job object of the fixtures
                                  (tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining/rest_jobs.json,
                                  about 10 KB of JSON each) with its id, user, account, partition,
                                  state and reason varied: 500 users, 50 accounts, 8 partitions, so
                                  the label sets stay far fewer than the jobs, as on a real cluster
  tests/bench/gen_rest.py nodes N OUT   N nodes, each a copy of a real node object (about 2.7 KB)

The answer is written as it is generated (a 1 GB answer never sits in this process), with the
envelope slurmrestd writes around it (meta, errors, warnings)."""
import json
import random
import sys

FIX = 'tests/fixtures/slurm-25.11-rest/R2-busy-mix-draining/'
STATES = [(['RUNNING'], 'None'), (['PENDING'], 'Priority'), (['PENDING'], 'Resources'),
          (['PENDING'], 'Dependency'), (['COMPLETED'], 'None'), (['RUNNING', 'COMPLETING'], 'None'),
          (['SUSPENDED'], 'None'), (['CANCELLED'], 'None')]


def write(out, key, objects, envelope):
    out.write('{"%s": [' % key)
    for i, obj in enumerate(objects):
        if i:
            out.write(',')
        out.write(json.dumps(obj, indent=2))
    out.write('],')
    out.write(json.dumps(envelope)[1:])


def jobs(n):
    src = json.load(open(FIX + 'rest_jobs.json'))
    job = next(j for j in src['jobs'] if j['job_state'] == ['RUNNING'])
    rnd = random.Random(1)
    for i in range(n):
        j = dict(job)
        state, reason = STATES[rnd.randrange(len(STATES))]
        user = rnd.randrange(500)
        j.update(job_id=100000 + i, job_state=state, state_reason=reason,
                 user_name='user%03d' % user, user_id=20000 + user,
                 account='acct%02d' % (user % 50), partition='part%d' % rnd.randrange(8),
                 cpus={'set': True, 'infinite': False, 'number': 1 + rnd.randrange(64)})
        yield j
    return src


def nodes(n):
    src = json.load(open(FIX + 'rest_nodes.json'))
    node = src['nodes'][3]
    for i in range(n):
        nd = dict(node)
        nd.update(name='node%05d' % i, hostname='node%05d' % i,
                  state=[['IDLE'], ['MIXED'], ['ALLOCATED'], ['IDLE', 'DRAIN']][i % 4])
        yield nd


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ('jobs', 'nodes'):
        sys.exit(__doc__)
    kind, n = sys.argv[1], int(sys.argv[2])
    src = json.load(open(FIX + 'rest_%s.json' % kind))
    envelope = {k: v for k, v in src.items() if k != kind}
    with open(sys.argv[3], 'w') as out:
        write(out, kind, (jobs if kind == 'jobs' else nodes)(n), envelope)


if __name__ == '__main__':
    main()
