package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Command-line clients cannot set per-record headers (kcat) or timestamps
// (kcat, kafka-console-producer), so their records carry the spec's key
// and value, fixed headers, and the producer's clock as create time; the
// record number comes from the value's "value-<i>-" prefix.

// toolRecord is one record as a command-line consumer printed it.
type toolRecord struct {
	Topic      string
	Partition  int32
	Offset     int64
	Key        *string
	Value      string
	Headers    string // "k=v,k=v" (kcat) or "k:v,k:v" (console consumer)
	Timestamp  int64
	CreateTime bool
}

var valueSeq = regexp.MustCompile(`^value-(\d+)-`)

// checkToolRecords checks the records one topic's consumer printed:
// every record once, spec key and value, the wanted headers, a create time
// within [from, to], offsets dense from 0 in each partition.
func checkToolRecords(recs []toolRecord, count int, wantHeaders string, from, to time.Time) []string {
	var errs []string
	fail := func(format string, args ...any) {
		if len(errs) < 5 {
			errs = append(errs, fmt.Sprintf(format, args...))
		}
	}
	seen := map[int]bool{}
	next := map[int32]int64{}
	for _, r := range recs {
		at := fmt.Sprintf("%s[%d]@%d", r.Topic, r.Partition, r.Offset)
		m := valueSeq.FindStringSubmatch(r.Value)
		if m == nil {
			fail("%s: value %.40q", at, r.Value)
			continue
		}
		i, _ := strconv.Atoi(m[1])
		if i >= count || seen[i] {
			fail("%s: record %d unexpected or twice", at, i)
			continue
		}
		seen[i] = true
		if r.Value != string(valueOf(i)) {
			fail("%s: record %d value %.40q", at, i, r.Value)
		}
		want := keyOf(i)
		if (want == nil) != (r.Key == nil) || (want != nil && *r.Key != string(want)) {
			fail("%s: record %d key %v, want %q", at, i, r.Key, want)
		}
		if r.Headers != wantHeaders {
			fail("%s: record %d headers %q, want %q", at, i, r.Headers, wantHeaders)
		}
		if !r.CreateTime || r.Timestamp < from.Add(-time.Second).UnixMilli() || r.Timestamp > to.Add(time.Second).UnixMilli() {
			fail("%s: record %d timestamp %d (create time %v) outside the produce run", at, i, r.Timestamp, r.CreateTime)
		}
		if r.Offset != next[r.Partition] {
			fail("%s: offsets not dense, want %d", at, next[r.Partition])
		}
		next[r.Partition] = r.Offset + 1
	}
	if len(seen) != count {
		fail("%d of %d records consumed", len(seen), count)
	}
	return errs
}

// toolInput is the producer's stdin: "key<sep>value" per record, or just
// the value (kcat: no delimiter means a null key) or nullMarker<sep>value.
func toolInput(count int, sep, nullKey, prefix func(i int) string) []byte {
	var b bytes.Buffer
	for i := range count {
		b.WriteString(prefix(i))
		if k := keyOf(i); k != nil {
			b.Write(k)
			b.WriteString(sep(i))
		} else {
			b.WriteString(nullKey(i))
		}
		b.Write(valueOf(i))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// firstLines is the start of a tool's stderr without log noise: where a
// JVM tool prints its error.
func firstLines(s string, n int) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "SLF4J") || strings.HasPrefix(l, "[") {
			continue
		}
		if keep = append(keep, l); len(keep) == n {
			break
		}
	}
	return strings.Join(keep, " / ")
}

func runCmd(ctx context.Context, stdin []byte, name string, args ...string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, name, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		// Kafka's TopicCommand prints its error on stdout, its log on
		// stderr: without a message on stderr, stdout's is the one.
		msg := firstLines(errb.String(), 3)
		if msg == "" {
			msg = firstLines(out.String(), 3)
		}
		return out.String(), fmt.Errorf("%v: %s (command: %s %s)", err, msg, filepath.Base(name), strings.Join(args, " "))
	}
	return out.String(), nil
}

// toolScenario is the matrix scenario for a command-line client.
type toolScenario struct {
	client      string
	wantHeaders string
	// produce writes count records to topic with codec ("none" for none).
	produce func(ctx context.Context, topic, codec string, count int, idempotent bool) error
	// consume reads topic in group and returns the records.
	consume func(ctx context.Context, topic, group string, count int) ([]toolRecord, error)
	// committed returns "" when group's committed offsets equal the ends.
	committed func(ctx context.Context, group string, topics []string) string
}

func (s toolScenario) run(ctx context.Context, prefix string, count int) *Report {
	rep := newReport(s.client)
	group := prefix + "-group"
	var topics []string
	produceErr := map[string]string{}
	consumeErr := map[string]string{}
	var consumeErrs []string
	assigned := false
	for _, codec := range append(append([]string{}, codecs...), "idem") {
		topic, n := prefix+"-"+codec, count
		if codec == "idem" {
			n = max(count/10, 1)
		}
		from := time.Now()
		compression := codec
		if codec == "idem" {
			compression = "none"
		}
		err := s.produce(ctx, topic, compression, n, codec == "idem")
		to := time.Now()
		if err != nil {
			produceErr[codec] = err.Error()
			continue
		}
		topics = append(topics, topic)
		recs, err := s.consume(ctx, topic, group, n)
		if len(recs) > 0 {
			assigned = true
		}
		errs := checkToolRecords(recs, n, s.wantHeaders, from, to)
		if err != nil {
			errs = append([]string{err.Error()}, errs...)
		}
		if len(errs) > 0 {
			consumeErr[codec] = strings.Join(errs[:min(2, len(errs))], "; ")
			consumeErrs = append(consumeErrs, consumeErr[codec])
		}
	}
	if e, ok := produceErr["none"]; ok {
		rep.set("produce", Fail, "%s", e)
	} else {
		rep.set("produce", Pass, "%d records per codec, keyed and unkeyed, producer timestamps", count)
	}
	switch {
	case len(topics) == 0:
		rep.set("consume", Fail, "nothing was produced")
	case len(consumeErrs) > 0:
		rep.set("consume", Fail, "%s", strings.Join(consumeErrs[:min(2, len(consumeErrs))], "; "))
	default:
		rep.set("consume", Pass, "key, value, headers, create time, dense offsets of every record")
	}
	if assigned {
		rep.set("group", Pass, "")
	} else {
		rep.set("group", Fail, "no record consumed in the group")
	}
	if len(topics) > 0 {
		if bad := s.committed(ctx, group, topics); bad != "" {
			rep.set("commit", Fail, "%s", bad)
		} else {
			rep.set("commit", Pass, "committed offsets equal the partitions' ends")
		}
	} else {
		rep.set("commit", Fail, "not reached")
	}
	hdrFail := false
	for _, e := range consumeErrs {
		hdrFail = hdrFail || strings.Contains(e, "headers")
	}
	if hdrFail || len(topics) == 0 {
		rep.set("headers", Fail, "see consume")
	} else {
		rep.set("headers", Pass, "the same headers on every record (%s)", s.wantHeaders)
	}
	for _, codec := range append(append([]string{}, codecs...), "idem") {
		feature := "codec:" + codec
		if codec == "idem" {
			feature = "idempotence"
		}
		switch {
		case produceErr[codec] != "":
			rep.set(feature, Fail, "produce: %s", produceErr[codec])
		case consumeErr[codec] != "":
			rep.set(feature, Fail, "%s", consumeErr[codec])
		default:
			rep.set(feature, Pass, "")
		}
	}
	return rep
}

// ---------------------------------------------------------------- kcat

type kcatJSON struct {
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Offset    int64    `json:"offset"`
	TsType    string   `json:"tstype"`
	Ts        int64    `json:"ts"`
	Headers   []string `json:"headers"`
	Key       *string  `json:"key"`
	Payload   *string  `json:"payload"`
}

func runKcat(ctx context.Context, _, bootstrap, prefix string, count int) *Report {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		rep := newReport("kcat")
		rep.failAll("kcat is not installed (make deps): " + err.Error())
		return rep
	}
	version := ""
	if out, _ := exec.Command(kcat, "-V").CombinedOutput(); len(out) > 0 {
		if m := regexp.MustCompile(`Version (\S+).*librdkafka (\S+)`).FindSubmatch(out); m != nil {
			version = "kcat " + string(m[1]) + " (librdkafka " + string(m[2]) + ")"
		}
	}
	s := toolScenario{client: "kcat", wantHeaders: "client=kcat,pad=",
		produce: func(ctx context.Context, topic, codec string, count int, idempotent bool) error {
			in := toolInput(count, func(int) string { return "\t" }, func(int) string { return "" }, func(int) string { return "" })
			args := []string{"-P", "-b", bootstrap, "-t", topic, "-K", "\t", "-z", codec, "-H", "client=kcat", "-H", "pad=",
				"-X", "acks=all"}
			if idempotent {
				args = append(args, "-X", "enable.idempotence=true")
			}
			_, err := runCmd(ctx, in, kcat, args...)
			return err
		},
		consume: func(ctx context.Context, topic, group string, count int) ([]toolRecord, error) {
			out, err := runCmd(ctx, nil, kcat, "-b", bootstrap, "-G", group, "-X", "auto.offset.reset=earliest",
				"-c", strconv.Itoa(count), "-J", "-q", topic)
			var recs []toolRecord
			sc := bufio.NewScanner(strings.NewReader(out))
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				var m kcatJSON
				if json.Unmarshal(sc.Bytes(), &m) != nil || m.Payload == nil {
					continue
				}
				var hs []string
				for k := 0; k+1 < len(m.Headers); k += 2 {
					hs = append(hs, m.Headers[k]+"="+m.Headers[k+1])
				}
				recs = append(recs, toolRecord{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset, Key: m.Key,
					Value: *m.Payload, Headers: strings.Join(hs, ","), Timestamp: m.Ts, CreateTime: m.TsType == "create"})
			}
			return recs, err
		},
		committed: func(ctx context.Context, group string, topics []string) string {
			return errString(franzCommitted(ctx, franzAdmin(bootstrap), group, topics))
		},
	}
	rep := s.run(ctx, prefix, count)
	rep.Version = version
	rep.Notes = append(rep.Notes, "admin not checked: kcat has no admin calls (only -L metadata)",
		"kcat -P sets the same headers on every record (-H) and cannot set timestamps: create times of the produce run are checked")
	return rep
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
