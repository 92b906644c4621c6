package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// good returns record i of topic t as a correct client would hand it over.
func good(t string, i int, client string, off int64) consumed {
	return consumed{Topic: t, Partition: int32(i % partitions), Offset: off, Key: keyOf(i), Value: valueOf(i),
		Headers: headersOf(i, client), Timestamp: ts0 + int64(i), CreateTime: true}
}

func TestVerifierAcceptsTheSpec(t *testing.T) {
	v := newVerifier("c", nil, map[string]int{"t": 6})
	for i := range 6 {
		v.check(good("t", i, "c", int64(i/partitions)))
	}
	if !v.done() || len(v.errs) != 0 {
		t.Fatalf("done %v, errors %+v", v.done(), v.errs)
	}
}

func TestVerifierCatchesEachFault(t *testing.T) {
	cases := map[string]struct {
		feature string
		mangle  func(*consumed)
	}{
		"null key for a keyed record": {"consume", func(c *consumed) { c.Key = nil }},
		"empty key for a null key":    {"consume", func(c *consumed) { c.Key = []byte{} }},
		"value":                       {"consume", func(c *consumed) { c.Value = c.Value[:99] }},
		"timestamp":                   {"consume", func(c *consumed) { c.Timestamp++ }},
		"log append time":             {"consume", func(c *consumed) { c.CreateTime = false }},
		"offset":                      {"consume", func(c *consumed) { c.Offset = 7 }},
		"header value":                {"headers", func(c *consumed) { c.Headers[2].Value = []byte("y") }},
		"header order":                {"headers", func(c *consumed) { c.Headers[0], c.Headers[1] = c.Headers[1], c.Headers[0] }},
		"no seq header":               {"headers", func(c *consumed) { c.Headers = c.Headers[1:] }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// Record 4 is keyed (even), record 3 is not; pick the one the
			// fault applies to.
			i := 4
			if name == "empty key for a null key" {
				i = 3
			}
			placed := map[string]map[int]location{"t": {i: {int32(i % partitions), 1}}}
			v := newVerifier("c", placed, map[string]int{"t": 6})
			c := good("t", i, "c", 1)
			tc.mangle(&c)
			v.check(c)
			if len(v.errs) != 1 || v.errs[0].Feature != tc.feature {
				t.Fatalf("errors %+v, want one %s error", v.errs, tc.feature)
			}
		})
	}
}

func TestVerifierWithoutLocationsWantsDenseOffsets(t *testing.T) {
	v := newVerifier("c", nil, map[string]int{"t": 6})
	v.check(good("t", 0, "c", 0))
	v.check(good("t", 3, "c", 2)) // partition 0 again: offset 1 skipped
	if len(v.errs) != 1 || !strings.Contains(v.errs[0].Msg, "not dense") {
		t.Fatalf("errors %+v", v.errs)
	}
	v.check(good("t", 3, "c", 3))
	if len(v.errs) != 2 || !strings.Contains(v.errs[1].Msg, "twice") {
		t.Fatalf("errors %+v", v.errs)
	}
}

func TestParseCheckerAndMarkdown(t *testing.T) {
	out := "# log\nVERSION kafkajs 2.2.4\nRESULT produce PASS 10 records\nRESULT codec:lz4 LIMIT no codec\n" +
		"RESULT admin FAIL createTopics: KafkaJSProtocolError: boom | pipe\n"
	r := newReport("kafkajs")
	if err := parseChecker(r, strings.NewReader(out)); err != nil {
		t.Fatal(err)
	}
	if r.Version != "kafkajs 2.2.4" || r.Results["produce"].Status != Pass || r.Results["codec:lz4"].Status != Limit ||
		r.Results["admin"].Detail != "createTopics: KafkaJSProtocolError: boom | pipe" || !r.failed() {
		t.Fatalf("parsed %+v", r)
	}
	if err := parseChecker(newReport("x"), strings.NewReader("RESULT produce MAYBE\n")); err == nil {
		t.Fatal("an unknown status was accepted")
	}
	var md bytes.Buffer
	single := &matrixRun{title: "One broker", against: "samsa", count: 10, reports: []*Report{r}}
	cluster := &matrixRun{title: "3-broker cluster", against: "a cluster", brokers: 3, count: 10, reports: []*Report{newReport("franz-go")}}
	writeMarkdown(&md, []*matrixRun{single, cluster}, time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC), time.Minute)
	s := md.String()
	for _, want := range []string{
		"2026-11-30 04:00 UTC against samsa, then against a cluster.",
		"## One broker\n\n10 records per codec topic, 1 with the idempotent producer",
		"## 3-broker cluster\n",
		"replication factor 3",
		"| franz-go |  | — | — |",
		"### 3-broker cluster\n\nNone.\n",
		"| kafkajs | kafkajs 2.2.4 | pass | — | — | — | **FAIL** | — | — | — | limit | — | — | — |",
		`- kafkajs, admin, fail: createTopics: KafkaJSProtocolError: boom \| pipe`,
		"- kafkajs, codec:lz4, limit: no codec",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("markdown lacks %q:\n%s", want, s)
		}
	}
}

// checkCommitted passes exactly the committed records of the
// transactions scenario, in any order, and names each other fault.
func TestCheckCommitted(t *testing.T) {
	const k = 4
	var committed [][]byte
	for i := 3*k - 1; i >= 0; i-- {
		if !txnAborted(i, k) {
			committed = append(committed, valueOf(i))
		}
	}
	if err := checkCommitted(committed, k); err != nil {
		t.Fatalf("the committed records: %v", err)
	}
	cases := map[string][][]byte{
		"aborted":  append(committed[:len(committed):len(committed)], valueOf(k)),
		"twice":    append(committed[:len(committed):len(committed)], valueOf(0)),
		"missing":  committed[1:],
		"not sent": append(committed[:len(committed):len(committed)], valueOf(3*k)),
	}
	for want, values := range cases {
		if err := checkCommitted(values, k); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
}
