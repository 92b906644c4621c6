"""Uses samsa's REST proxy the way a Python service would, with httpx
(e2e/restproxy/python_test.go runs it).

Usage: rest_proxy.py BASE_URL TOPIC COUNT

Creates TOPIC through v3, produces COUNT JSON records {"n": i} with
JSON string keys "k<i>", consumes them back through a v2 consumer
instance in group "py-group", commits what it fetched, deletes the instance, and prints one
JSON line: {"records": [{"key":..., "value":..., "offset":...}, ...]}.
"""
import json
import sys
import time

import httpx

V2 = "application/vnd.kafka.v2+json"


def check(resp, *codes):
    if resp.status_code not in codes:
        sys.exit(f"{resp.request.method} {resp.request.url}: {resp.status_code} {resp.text}")
    return resp


def main():
    base, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with httpx.Client(base_url=base, timeout=30) as http:
        cluster = check(http.get("/v3/clusters"), 200).json()["data"][0]["cluster_id"]
        topics = f"/v3/clusters/{cluster}/topics"
        check(http.post(topics, json={"topic_name": topic, "partitions_count": 1}), 201)
        for i in range(count):
            answer = check(http.post(f"{topics}/{topic}/records", json={
                "key": {"type": "JSON", "data": f"k{i}"},
                "value": {"type": "JSON", "data": {"n": i}},
            }), 200).json()
            if answer["error_code"] != 200:
                sys.exit(f"produce {i}: {answer}")

        instance = check(http.post("/consumers/py-group", headers={"Content-Type": V2},
                                   json={"name": "py", "format": "json", "auto.offset.reset": "earliest"}), 200).json()
        uri = instance["base_uri"]
        check(http.post(f"{uri}/subscription", headers={"Content-Type": V2}, json={"topics": [topic]}), 204)
        records = []
        deadline = time.monotonic() + 60
        while len(records) < count and time.monotonic() < deadline:
            batch = check(http.get(f"{uri}/records", params={"timeout": 500},
                                   headers={"Accept": "application/vnd.kafka.json.v2+json"}), 200).json()
            records.extend({"key": r["key"], "value": r["value"], "offset": r["offset"]} for r in batch)
        check(http.post(f"{uri}/offsets", headers={"Content-Type": V2}), 200)
        check(http.delete(uri, headers={"Content-Type": V2}), 204)
    print(json.dumps({"records": records}))


if __name__ == "__main__":
    main()
