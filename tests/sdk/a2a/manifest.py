"""Writes the A2A entries of tests/fixtures/sdk/manifest.json: what each fixture must settle to.

Run by gen.sh after the generators. The manifest is one JSON array shared with the AG-UI
corpus: entries whose file is not under tests/fixtures/sdk/a2a/ are kept as they are.

Every A2A fixture carries the same seven claims (gen_py.py / gen_js.mjs, agent_data.json),
each a result and its citation in one artifact or message; EXPECTED says what each must
settle to over the bundled Versant data, and why. The true values (main_weight, base: aware of
the brand), recomputed from versant_flat.parquet independently of recite:
  Versant W6 (n 4654): Familiar 0.69427, Considered 0.44249, Purchased 0.26840, Loyal 0.13205
  Versant W5 (n 4595): Considered 0.46661
  Corvana W6 (n 3343): Familiar 0.63749, Considered 0.30666, Purchased 0.19602, Loyal 0.10106
"""

import json
import re
import sys

from pathlib import Path


W6 = ('W6 (April 2026)', 's14r5')
W5 = ('W5 (March 2026)', 's14r5')
CORVANA_W6 = ('W6 (April 2026)', 's14r4')

FUNNEL = ['Aware', 'Familiar', 'Considered', 'Purchased', 'Loyal']

# (where, (period, column), verdict, measures its claimed numbers must be compared with, why).
# `compared` guards against a verdict reached for the wrong reason: a result whose numbers
# were not read is settled on base n alone and can come out REPRODUCED.
EXPECTED = [
    (
        {'artifact_id': 'versant-funnel-w6'},
        W6,
        'REPRODUCED',
        FUNNEL,
        'funnel streamed in two chunks (result, then the citation with append/lastChunk); every stage and base n 4654 match',
    ),
    (
        {'artifact_id': 'versant-strings-w6'},
        W6,
        'REPRODUCED',
        ['Familiar', 'Considered'],
        'numbers as strings ("44%", "0.694"); citation media type in odd case with "; charset=utf-8" (v0.3: no media type, by shape)',
    ),
    (
        {'artifact_id': 'versant-whole-w6'},
        W6,
        'REPRODUCED',
        ['Considered'],
        'whole numbers {"Considered": 44, "n": 4654}: the Python SDK writes 44.0 and 4654.0 (ProtoJSON Value is a double); 44 is a whole percent (44.2 within ±0.5) and n a base n',
    ),
    (
        {'artifact_id': 'versant-scalar-w6'},
        W6,
        'REPRODUCED',
        ['Considered'],
        'non-object result, the bare number 0.442 (v0.3 adapters wrap it as {"value": 0.442} with metadata.data_part_compat)',
    ),
    (
        {'artifact_id': 'versant-considered-w5'},
        W5,
        'REPRODUCED',
        ['Considered'],
        'citation Part whose data is a list of one citation (v0.3 adapters wrap it as {"value": [...]} with metadata.data_part_compat and drop the media type)',
    ),
    (
        {'artifact_id': 'corvana-funnel-w6'},
        CORVANA_W6,
        'REPRODUCED',
        FUNNEL,
        'citation carried as bytes: a v1.0 raw Part (base64) with the citations media type (v0.3: a file Part with bytes and that mimeType)',
    ),
    (
        {'message_id': '{answer}'},
        W6,
        'DISCREPANT',
        ['Considered'],
        'issue 9: the result {"Considered": "47%"} (W5\'s value, numbers as strings) beside a W6 citation; W6 gives 44.2%',
    ),
]

# Files where the SDK changed what the agent sent, and what that must settle to.
OVERRIDES = {
    'py-v03-rest-message-send.json': {
        'corvana-funnel-w6': (
            'INVALID',
            "a2a-sdk 1.3.0's v0.3 REST adapter base64-encodes the citation twice (proto_utils encodes the "
            'v0.3 base64 text as the bytes of fileWithBytes), so the citation cannot be read: a quantitative '
            'result without a readable citation',
        ),
    },
}

PROTOCOL = {'v03-adapter': 'a2a-v0.3', 'v03-push': 'a2a-v0.3'}

# Push-notification logs (bindings `push`, `v03-push`): the bodies an SDK's push sender POSTed,
# one per line. @a2a-js/sdk's v0.3 sender posts the whole Task after every event, so a result
# and its citation recur in every later body; each is still ONE claim (the `at` locators match
# exactly one), and a citation settled from one body is not unread in another that repeats it.
# `must_findings` lists the rules of the MUST findings a correct verifier reports (as in
# tests/fixtures/frameworks/manifest.json): none. Only these entries state it so far.
PUSH_BINDINGS = {'push', 'v03-push'}


def entries(repo: Path) -> list[dict]:
    fixtures = repo / 'tests/fixtures/sdk/a2a'
    index = json.loads((fixtures / 'versions.json').read_text())
    out = []
    for name, info in index['files'].items():
        text = (fixtures / name).read_text()
        answers = set(re.findall(r'"messageId": ?"([^"]*-answer)"', text))
        if len(answers) != 1:
            sys.exit(f'{name}: expected one final answer message id, found {sorted(answers)}')
        answer = answers.pop()
        claims = []
        for where, (period, column), verdict, compared, why in EXPECTED:
            where = {k: v.format(answer=answer) for k, v in where.items()}
            override = OVERRIDES.get(name, {}).get(where.get('artifact_id'))
            if override:
                verdict, why = override
                compared = []
            claim = {'at': where, 'period': period, 'column': column, 'verdict': verdict}
            claim.update({'compared': compared, 'why': why})
            claims.append(claim)
        counts: dict[str, int] = {}
        for c in claims:
            counts[c['verdict']] = counts.get(c['verdict'], 0) + 1
        out.append(
            {
                'file': f'tests/fixtures/sdk/a2a/{name}',
                'sdk': info['sdk'],
                'sdk_version': index['versions'][info['sdk']],
                'binding': info['binding'],
                'protocol': PROTOCOL.get(info['binding'], 'a2a-v1.0'),
                'written_by': info['note'],
                'verdicts': dict(sorted(counts.items())),
                'claims': claims,
            }
        )
        if info['binding'] in PUSH_BINDINGS:
            out[-1]['must_findings'] = []
    return out


def main() -> None:
    repo = Path(sys.argv[1])
    path = repo / 'tests/fixtures/sdk/manifest.json'
    others = []
    if path.exists():
        others = [
            e
            for e in json.loads(path.read_text())
            if not e['file'].startswith('tests/fixtures/sdk/a2a/')
        ]
    merged = sorted(others + entries(repo), key=lambda e: e['file'])
    path.write_text(json.dumps(merged, indent=2, ensure_ascii=False) + '\n')
    print(f'wrote {path} ({len(merged)} entries)')


if __name__ == '__main__':
    main()
