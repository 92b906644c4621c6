package compare

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// KafkaToolWorkloads runs Kafka's own ProducerPerformance and
// ConsumerPerformance (kafka-tools) against the broker, so the comparison
// does not rest on franz-go alone.
func KafkaToolWorkloads(classPath string, scale float64) []Workload {
	records := scaled(1_000_000, scale, 10_000)
	prodName := "8 Kafka ProducerPerformance 100 B, acks=1"
	consName := "9 Kafka ConsumerPerformance"
	java := func(ctx context.Context, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "java", append(append(append([]string{}, JVMOptions...), "-cp", classPath), args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	prodArgs := func(addr string) []string {
		return []string{"org.apache.kafka.tools.ProducerPerformance", "--topic", "w8-tools", "--num-records", strconv.FormatInt(records, 10),
			"--record-size", "100", "--throughput", "-1", "--producer-props", "bootstrap.servers=" + addr, "acks=1", "linger.ms=5", "batch.size=1048576"}
	}
	consArgs := func(addr string) []string {
		return []string{"org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server", addr, "--topic", "w8-tools",
			"--messages", strconv.FormatInt(records, 10), "--timeout", "60000"}
	}
	return []Workload{
		{Name: prodName, PlaintextOnly: true, Command: "java " + strings.Join(prodArgs("ADDR"), " "), Run: func(ctx context.Context, b *Running) ([]Figure, error) {
			if err := createTopic(ctx, b.Addr, "w8-tools", 6); err != nil {
				return nil, err
			}
			before, _ := b.Usage()
			out, err := java(ctx, prodArgs(b.Addr)...)
			if err != nil {
				return nil, fmt.Errorf("ProducerPerformance: %v: %s", err, tail(out))
			}
			after, _ := b.Usage()
			p, err := ParseProducerPerformance(out)
			if err != nil {
				return nil, err
			}
			return []Figure{
				{prodName, "records/s", "records/s", p.RecordsPerS, false},
				{prodName, "produce p99", "ms", p.P99, true},
				{prodName, "broker CPU", "CPU-s", after.CPUSeconds - before.CPUSeconds, true},
			}, nil
		}},
		{Name: consName, PlaintextOnly: true, Command: "java " + strings.Join(consArgs("ADDR"), " "), Run: func(ctx context.Context, b *Running) ([]Figure, error) {
			before, _ := b.Usage()
			out, err := java(ctx, consArgs(b.Addr)...)
			if err != nil {
				return nil, fmt.Errorf("ConsumerPerformance: %v: %s", err, tail(out))
			}
			after, _ := b.Usage()
			c, err := ParseConsumerPerformance(out)
			if err != nil {
				return nil, err
			}
			return []Figure{
				{consName, "records/s", "records/s", c.RecordsPerS, false},
				{consName, "MB/s", "MB/s", c.MBPerS, false},
				{consName, "fetch records/s (without group join)", "records/s", c.FetchRecordsPerS, false},
				{consName, "broker CPU", "CPU-s", after.CPUSeconds - before.CPUSeconds, true},
			}, nil
		}},
	}
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

// ToolResult is what Kafka's performance tools print in their summary.
type ToolResult struct {
	Records     int64
	RecordsPerS float64
	MBPerS      float64
	P50, P99    float64 // ms (producer only)
	// FetchRecordsPerS is the consumer's rate without the group join
	// (fetch.nMsg.sec).
	FetchRecordsPerS float64
}

var producerSummary = regexp.MustCompile(`(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\).*?(\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th`)

// ParseProducerPerformance reads ProducerPerformance's final summary line.
func ParseProducerPerformance(out string) (ToolResult, error) {
	m := producerSummary.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		return ToolResult{}, fmt.Errorf("compare: no ProducerPerformance summary in: %s", tail(out))
	}
	last := m[len(m)-1]
	var r ToolResult
	r.Records, _ = strconv.ParseInt(last[1], 10, 64)
	r.RecordsPerS, _ = strconv.ParseFloat(last[2], 64)
	r.MBPerS, _ = strconv.ParseFloat(last[3], 64)
	r.P50, _ = strconv.ParseFloat(last[4], 64)
	r.P99, _ = strconv.ParseFloat(last[6], 64)
	return r, nil
}

// ParseConsumerPerformance reads ConsumerPerformance's CSV: a header line
// naming the columns, then one line of values.
func ParseConsumerPerformance(out string) (ToolResult, error) {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "start.time") || i+1 >= len(lines) {
			continue
		}
		cols := strings.Split(l, ",")
		vals := strings.Split(lines[i+1], ",")
		get := func(name string) (float64, bool) {
			for j, c := range cols {
				if strings.TrimSpace(c) == name && j < len(vals) {
					v, err := strconv.ParseFloat(strings.TrimSpace(vals[j]), 64)
					return v, err == nil
				}
			}
			return 0, false
		}
		n, ok1 := get("data.consumed.in.nMsg")
		rps, ok2 := get("nMsg.sec")
		mbs, ok3 := get("MB.sec")
		fetch, _ := get("fetch.nMsg.sec")
		if ok1 && ok2 && ok3 {
			return ToolResult{Records: int64(n), RecordsPerS: rps, MBPerS: mbs, FetchRecordsPerS: fetch}, nil
		}
	}
	return ToolResult{}, fmt.Errorf("compare: no ConsumerPerformance summary in: %s", tail(out))
}
