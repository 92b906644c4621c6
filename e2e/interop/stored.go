package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// codecIDs are the batch attribute values of each codec.
var codecIDs = map[string]uint8{"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

// checkStoredCodecs reads each codec topic a client wrote, without a group,
// and turns a passing codec cell into a failure when the stored batches do
// not carry that codec: the client then sent something else (or samsa
// rewrote it), and the round trip proved nothing about the codec.
func checkStoredCodecs(ctx context.Context, bootstrap, prefix string, rep *Report) {
	var topics []string
	for _, c := range codecs {
		if rep.Results["codec:"+c].Status == Pass {
			topics = append(topics, prefix+"-"+c)
		}
	}
	if len(topics) == 0 {
		return
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(bootstrap)...), kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return
	}
	defer cl.Close()
	seen := map[string]map[uint8]int{}
	for _, t := range topics {
		seen[t] = map[uint8]int{}
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	// Read until every topic has shown 100 records (or the time is up):
	// a total over all topics could be reached from one topic alone,
	// leaving the others unread and reported empty.
	count := map[string]int{}
	enough := func() bool {
		for _, t := range topics {
			if count[t] < 100 {
				return false
			}
		}
		return true
	}
	for !enough() && cctx.Err() == nil {
		cl.PollFetches(cctx).EachRecord(func(r *kgo.Record) {
			seen[r.Topic][r.Attrs.CompressionType()]++
			count[r.Topic]++
		})
	}
	for _, c := range codecs {
		t := prefix + "-" + c
		s, ok := seen[t]
		if !ok {
			continue
		}
		want := codecIDs[c]
		if len(s) == 0 {
			rep.set("codec:"+c, Fail, "the runner read nothing back from %s", t)
		} else if len(s) != 1 || s[want] == 0 {
			rep.set("codec:"+c, Fail, "stored batches of %s use codec ids %v (records per codec id), want only %d", t, fmt.Sprint(s), want)
		}
	}
}
