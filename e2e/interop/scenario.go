package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// goClient is a Go Kafka library driven in-process through the same
// scenario as the Python, Node and Java checkers.
type goClient interface {
	name() string
	version() string
	// produce writes records 0..count-1 of the spec to topic with codec and
	// returns where each landed, or nil when the library cannot say.
	produce(ctx context.Context, topic, codec string, count int, idempotent bool) (map[int]location, error)
	// consume reads every topic of v in group, committing after each batch,
	// and returns whether the group assigned partitions, the first commit
	// error (or committed offsets differing from the ends) and any error
	// that stopped consuming.
	consume(ctx context.Context, group string, v *verifier) (assigned bool, commitErr, err error)
	// admin creates, describes, lists, describes configs of, and deletes topic.
	admin(ctx context.Context, topic string) error
	// transactions runs the transactions scenario (transactions.go) on
	// topic with k records per transaction and returns the values its
	// read_committed consumer read.
	transactions(ctx context.Context, topic string, k int) ([][]byte, error)
}

// errLimit marks a feature the library lacks against Apache Kafka too.
type errLimit struct{ why string }

func (e errLimit) Error() string { return e.why }

const consumeTimeout = 90 * time.Second

// visibleTimeout bounds how long an admin scenario waits for a topic it
// just created to show in Metadata.
const visibleTimeout = 15 * time.Second

// untilVisible calls look, the Metadata reads (describe, list) of a topic
// just created, until it succeeds or visibleTimeout passes, and returns
// its last error. In a cluster CreateTopics answers once the receiving
// broker knows the new leaders; the other brokers learn them from the
// controller's UpdateMetadata a little later, so a read may reach one that
// has not (Kafka's Admin.createTopics documents the same), and an
// application waits as this does. DescribeConfigs is left out: a broker
// that knows the topic must answer it.
func untilVisible(ctx context.Context, look func() error) error {
	deadline := time.Now().Add(visibleTimeout)
	for {
		err := look()
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// runScenario runs the matrix scenario with c on the topics prefix-<codec>
// and prefix-idem, which the runner created, and fills a report.
func runScenario(ctx context.Context, c goClient, prefix string, count int) *Report {
	rep := newReport(c.name())
	rep.Version = c.version()
	placed := map[string]map[int]location{}
	counts := map[string]int{}
	produceErr := map[string]error{}
	for _, codec := range codecs {
		topic := prefix + "-" + codec
		began := time.Now()
		where, err := c.produce(ctx, topic, codec, count, false)
		if err != nil {
			produceErr[codec] = err
			continue
		}
		slog.Info("produced", "client", c.name(), "topic", topic, "took", time.Since(began).Round(time.Millisecond))
		counts[topic] = count
		if where != nil {
			placed[topic] = where
		}
	}
	idemTopic, idemCount := prefix+"-idem", max(count/10, 1)
	if where, err := c.produce(ctx, idemTopic, "none", idemCount, true); err != nil {
		produceErr["idem"] = err
	} else {
		counts[idemTopic] = idemCount
		if where != nil {
			placed[idemTopic] = where
		}
	}

	v := newVerifier(c.name(), placed, counts)
	var assigned bool
	var commitErr, consumeErr error
	if len(counts) > 0 {
		cctx, cancel := context.WithTimeout(ctx, consumeTimeout)
		assigned, commitErr, consumeErr = c.consume(cctx, prefix+"-group", v)
		cancel()
	}
	summarize(rep, v, count, idemTopic, idemCount, produceErr, assigned, commitErr, consumeErr)
	if err := c.admin(ctx, prefix+"-admin"); err != nil {
		rep.set("admin", Fail, "%v", err)
	} else {
		rep.set("admin", Pass, "create, describe, list, describe configs, delete")
	}
	k := txnPerTxn(count)
	tctx, cancel := context.WithTimeout(ctx, consumeTimeout)
	values, err := c.transactions(tctx, prefix+"-txn", k)
	cancel()
	transactionsCell(rep, k, values, err)
	return rep
}

// summarize turns what a scenario saw into the report's cells.
func summarize(rep *Report, v *verifier, count int, idemTopic string, idemCount int, produceErr map[string]error,
	assigned bool, commitErr, consumeErr error) {
	var consumeErrs []string
	if consumeErr != nil {
		consumeErrs = append(consumeErrs, consumeErr.Error())
	}
	for _, e := range v.errs {
		if e.Feature == "consume" {
			consumeErrs = append(consumeErrs, e.Msg)
		}
	}
	var missing []string
	for t, n := range v.counts {
		if len(v.seen[t]) < n {
			missing = append(missing, fmt.Sprintf("%s: %d of %d", t, n-len(v.seen[t]), n))
		}
	}
	if len(missing) > 0 {
		consumeErrs = append(consumeErrs, "missing records: "+strings.Join(missing, ", "))
	}
	topicOK := func(t string) bool {
		if n, ok := v.counts[t]; !ok || len(v.seen[t]) != n {
			return false
		}
		for _, e := range v.errs {
			if e.Topic == t {
				return false
			}
		}
		return true
	}
	topicErrs := func(t string) string {
		var s []string
		for _, e := range v.errs {
			if e.Topic == t && len(s) < 2 {
				s = append(s, e.Msg)
			}
		}
		if len(s) == 0 {
			return "records missing"
		}
		return strings.Join(s, "; ")
	}

	if err := produceErr["none"]; err != nil {
		rep.set("produce", Fail, "%v", err)
	} else {
		rep.set("produce", Pass, "%d records per codec, keyed and unkeyed", count)
	}
	switch {
	case len(v.counts) == 0:
		rep.set("consume", Fail, "nothing was produced")
	case len(consumeErrs) > 0:
		rep.set("consume", Fail, "%s", strings.Join(consumeErrs[:min(3, len(consumeErrs))], "; "))
	default:
		rep.set("consume", Pass, "key, value, headers, timestamp, offset of every record")
	}
	if assigned {
		rep.set("group", Pass, "")
	} else {
		rep.set("group", Fail, "no partitions assigned: %v", consumeErr)
	}
	switch {
	case commitErr != nil:
		rep.set("commit", Fail, "%v", commitErr)
	case len(v.counts) > 0 && consumeErr == nil:
		rep.set("commit", Pass, "committed offsets equal the partitions' ends")
	default:
		rep.set("commit", Fail, "not reached")
	}
	var hdr []string
	for _, e := range v.errs {
		if e.Feature == "headers" && len(hdr) < 2 {
			hdr = append(hdr, e.Msg)
		}
	}
	if len(hdr) > 0 || len(v.counts) == 0 {
		rep.set("headers", Fail, "%s", strings.Join(hdr, "; "))
	} else {
		rep.set("headers", Pass, "")
	}
	for _, codec := range codecs {
		topic := strings.TrimSuffix(idemTopic, "-idem") + "-" + codec
		if err := produceErr[codec]; err != nil {
			if _, ok := err.(errLimit); ok {
				rep.set("codec:"+codec, Limit, "%v", err)
			} else {
				rep.set("codec:"+codec, Fail, "produce: %v", err)
			}
		} else if !topicOK(topic) {
			rep.set("codec:"+codec, Fail, "%s", topicErrs(topic))
		} else {
			rep.set("codec:"+codec, Pass, "")
		}
	}
	if err := produceErr["idem"]; err != nil {
		if _, ok := err.(errLimit); ok {
			rep.set("idempotence", Limit, "%v", err)
		} else {
			rep.set("idempotence", Fail, "%v", err)
		}
	} else if !topicOK(idemTopic) {
		rep.set("idempotence", Fail, "%s", topicErrs(idemTopic))
	} else {
		rep.set("idempotence", Pass, "%d records", idemCount)
	}
}
