"""A bounded load test of a running `recite serve` (docs/service.md; figures in BENCHMARKS.md).

    load.py BASE PID [REQUESTS] [CONCURRENCY]

Sends REQUESTS (default 2000) requests, CONCURRENCY (default 64) at a time, alternating
`POST /v1/verify` of each bundled citation, `POST /v1/check` of each bundled transcript and,
with `--a2a`, the A2A agent's JSON-RPC `SendMessage` of each citation as a data Part.
Every answer must be 200 and equal to the first answer to the same request (no error, no lost
or altered response): byte for byte over HTTP; for A2A, the Task's artifacts (its ids and
timestamps are new each time). Prints throughput, p50/p99 latency and the server's peak resident
memory (VmHWM of PID) as JSON. Uses httpx from the clients' venv (tests/serve/install.sh).
"""

import asyncio
import json
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
CITATIONS = sorted((ROOT / 'examples/citations').glob('*.json'))
TRANSCRIPTS = sorted((ROOT / 'examples/transcripts').iterdir())


def peak_rss_kib(pid: int) -> int:
    for line in Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith('VmHWM:'):
            return int(line.split()[1])
    return -1


def a2a_send(citation: bytes) -> bytes:
    return json.dumps({
        'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage',
        'params': {'message': {'messageId': 'load', 'role': 'ROLE_USER',
                               'parts': [{'data': json.loads(citation)}]}},
    }).encode()


def headers(path: str) -> dict:
    a2a = {'content-type': 'application/json', 'a2a-version': '1.0'}
    return a2a if path == '/a2a/jsonrpc' else {}


def answer(path: str, r: httpx.Response) -> bytes:
    """What must not change between two answers to the same request."""
    if path != '/a2a/jsonrpc':
        return r.content
    task = r.json()['result']['task']
    assert task['status']['state'] == 'TASK_STATE_COMPLETED', task['status']
    return json.dumps([a['parts'] for a in task['artifacts']], sort_keys=True).encode()


async def main() -> None:
    args = [a for a in sys.argv[1:] if a != '--a2a']
    base, pid = args[0], int(args[1])
    total = int(args[2]) if len(args) > 2 else 2000
    concurrency = int(args[3]) if len(args) > 3 else 64
    kinds = [('/v1/verify', p.read_bytes()) for p in CITATIONS]
    kinds += [('/v1/check?format=jsonl', p.read_bytes()) for p in TRANSCRIPTS]
    if '--a2a' in sys.argv:
        kinds += [('/a2a/jsonrpc', a2a_send(p.read_bytes())) for p in CITATIONS]
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as http:
        expected = {}
        for path, body in kinds:
            r = await http.post(path, content=body, headers=headers(path))
            r.raise_for_status()
            expected[(path, body)] = answer(path, r)
        latencies, errors = [], []
        queue = asyncio.Queue()
        for i in range(total):
            queue.put_nowait(kinds[i % len(kinds)])

        async def worker():
            while True:
                try:
                    path, body = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                t = time.perf_counter()
                try:
                    r = await http.post(path, content=body, headers=headers(path))
                    if r.status_code != 200:
                        errors.append(f'{path}: {r.status_code} {r.text[:200]}')
                    elif answer(path, r) != expected[(path, body)]:
                        errors.append(f'{path}: the answer differs from the first one')
                except (httpx.HTTPError, KeyError, AssertionError) as e:
                    errors.append(f'{path}: {e!r}')
                latencies.append(time.perf_counter() - t)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - start
    latencies.sort()

    def pct(p):
        return round(latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000, 1)

    print(json.dumps({
        'requests': total,
        'kinds': sorted({path.split('?')[0] for path, _ in kinds}),
        'concurrency': concurrency,
        'answered': len(latencies),
        'errors': len(errors),
        'first_errors': errors[:5],
        'wall_s': round(wall, 2),
        'requests_per_s': round(total / wall, 1),
        'p50_ms': pct(0.50),
        'p99_ms': pct(0.99),
        'server_peak_rss_mib': round(peak_rss_kib(pid) / 1024, 1),
    }, indent=2))
    if errors:
        sys.exit(1)


if __name__ == '__main__':
    asyncio.run(main())
