package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Result is the outcome of one run.
type Result struct {
	Kind        string        `json:"kind"` // produce, consume or e2e
	Records     int64         `json:"records"`
	Bytes       int64         `json:"bytes"` // payload bytes (keys + values)
	Errors      int64         `json:"errors"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	RecordsPerS float64       `json:"records_per_s"`
	MBPerS      float64       `json:"mb_per_s"`
	Produce     *Summary      `json:"produce_latency,omitempty"`
	EndToEnd    *Summary      `json:"e2e_latency,omitempty"`
	// SendLateness is, for fixed-rate runs, how long after its intended
	// send time each record was handed to the client: the generator's own
	// share of every latency above.
	SendLateness *Summary     `json:"send_lateness,omitempty"`
	Broker       *BrokerUsage `json:"broker,omitempty"`
	CPUPerMillon float64      `json:"broker_cpu_s_per_million_records,omitempty"`
	// ProduceRequests is how many produce requests the clients sent;
	// with the elapsed time and the broker's CPU it gives requests/s and
	// CPU per request.
	ProduceRequests int64   `json:"produce_requests,omitempty"`
	RequestsPerS    float64 `json:"produce_requests_per_s,omitempty"`
	CPUPerRequestUs float64 `json:"broker_cpu_us_per_produce_request,omitempty"`
	FirstError      string  `json:"first_error,omitempty"`
}

func (r *Result) finish(elapsed time.Duration) {
	r.Elapsed = elapsed
	if s := elapsed.Seconds(); s > 0 {
		r.RecordsPerS = float64(r.Records) / s
		r.MBPerS = float64(r.Bytes) / s / 1e6
	}
	if r.Broker != nil && r.Records > 0 {
		r.CPUPerMillon = r.Broker.CPUSeconds / float64(r.Records) * 1e6
	}
	if s := elapsed.Seconds(); s > 0 && r.ProduceRequests > 0 {
		r.RequestsPerS = float64(r.ProduceRequests) / s
		if r.Broker != nil {
			r.CPUPerRequestUs = r.Broker.CPUSeconds / float64(r.ProduceRequests) * 1e6
		}
	}
}

// WriteJSON writes the result as one JSON object.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the result as a human-readable table.
func (r *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\t\n", r.Kind)
	fmt.Fprintf(tw, "records\t%d\n", r.Records)
	fmt.Fprintf(tw, "elapsed\t%s\n", r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(tw, "throughput\t%.0f records/s, %.1f MB/s\n", r.RecordsPerS, r.MBPerS)
	if r.Errors > 0 {
		fmt.Fprintf(tw, "errors\t%d (first: %s)\n", r.Errors, r.FirstError)
	}
	for _, l := range []struct {
		name string
		s    *Summary
	}{{"produce latency", r.Produce}, {"end-to-end latency", r.EndToEnd}, {"generator lateness", r.SendLateness}} {
		if l.s != nil {
			fmt.Fprintf(tw, "%s\tp50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms", l.name, l.s.P50, l.s.P99, l.s.P999, l.s.Max)
			if l.s.Count < r.Records {
				// An unpaced produce run times a sample (unpacedLatencySample).
				fmt.Fprintf(tw, " (%d records timed)", l.s.Count)
			}
			fmt.Fprintln(tw)
		}
	}
	if r.ProduceRequests > 0 {
		fmt.Fprintf(tw, "produce requests\t%d, %.0f/s, %.1f records each", r.ProduceRequests, r.RequestsPerS,
			float64(r.Records)/float64(r.ProduceRequests))
		if r.Broker != nil {
			fmt.Fprintf(tw, ", broker CPU %.1f µs each (all its CPU over produce requests)", r.CPUPerRequestUs)
		}
		fmt.Fprintln(tw)
	}
	if b := r.Broker; b != nil {
		fmt.Fprintf(tw, "broker (pid %d)\t%.2f CPU-s (%.3f per million records), RSS %.1f MiB, peak %.1f MiB\n",
			b.PID, b.CPUSeconds, r.CPUPerMillon, float64(b.RSSBytes)/(1<<20), float64(b.PeakRSS)/(1<<20))
	}
	return tw.Flush()
}
