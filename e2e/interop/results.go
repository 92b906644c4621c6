package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Status of one feature for one client.
type Status string

const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	// Limit is a feature the client lacks against Apache Kafka too.
	Limit Status = "LIMIT"
	// NotRun is a feature the client was never asked to check.
	NotRun Status = ""
)

// scenarioFeatures are the columns a client's main run decides.
var scenarioFeatures = []string{"produce", "consume", "group", "commit", "admin",
	"codec:none", "codec:gzip", "codec:snappy", "codec:lz4", "codec:zstd", "idempotence", "headers", "transactions"}

// features are the matrix's columns, in order: the main run's, then
// sasl_ssl, which a separate step of its own decides (secure.go).
var features = append(append([]string(nil), scenarioFeatures...), saslFeature)

// Result is one cell of the matrix.
type Result struct {
	Status Status
	Detail string // the client's own error for a failure
}

// Report is one client's row.
type Report struct {
	Client  string
	Version string
	Results map[string]Result
	Took    time.Duration
	Log     string // what the checker printed, for failures
	Notes   []string
}

func newReport(client string) *Report {
	return &Report{Client: client, Results: map[string]Result{}}
}

func (r *Report) set(feature string, s Status, format string, args ...any) {
	r.Results[feature] = Result{Status: s, Detail: oneLine(fmt.Sprintf(format, args...))}
}

// failAll marks every feature not yet decided as failed with why, for a
// checker that could not run at all.
func (r *Report) failAll(why string) {
	for _, f := range scenarioFeatures {
		if _, ok := r.Results[f]; !ok {
			r.set(f, Fail, "%s", why)
		}
	}
}

// failed reports whether any feature failed.
func (r *Report) failed() bool {
	for _, res := range r.Results {
		if res.Status == Fail {
			return true
		}
	}
	return false
}

// parseChecker reads a checker's stdout: "VERSION text" and
// "RESULT feature PASS|FAIL|LIMIT detail" lines; other lines are log.
func parseChecker(r *Report, out io.Reader) error {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "VERSION "):
			r.Version = strings.TrimPrefix(line, "VERSION ")
		case strings.HasPrefix(line, "RESULT "):
			f := strings.SplitN(strings.TrimPrefix(line, "RESULT "), " ", 3)
			if len(f) < 2 {
				return fmt.Errorf("interop: malformed result line %q", line)
			}
			s := Status(f[1])
			if s != Pass && s != Fail && s != Limit {
				return fmt.Errorf("interop: unknown status in %q", line)
			}
			detail := ""
			if len(f) == 3 {
				detail = f[2]
			}
			r.Results[f[0]] = Result{Status: s, Detail: strings.TrimSpace(detail)}
		}
	}
	return sc.Err()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}

func cell(s Status) string {
	switch s {
	case Pass:
		return "pass"
	case Fail:
		return "**FAIL**"
	case Limit:
		return "limit"
	}
	return "—"
}

// writeMarkdown writes docs/compatibility.md: the common text, then one
// table per run (the single broker, a cluster), then each run's failures,
// limits and notes, so a cell that differs between runs is easy to spot.
func writeMarkdown(w io.Writer, runs []*matrixRun, when time.Time, total time.Duration) {
	fmt.Fprintf(w, "# Client compatibility\n\n")
	var against []string
	for _, mr := range runs {
		against = append(against, mr.against)
	}
	fmt.Fprintf(w, "Written by `make interop` (e2e/interop) on %s against %s. ", when.UTC().Format("2006-01-02 15:04 UTC"),
		strings.Join(against, ", then against "))
	fmt.Fprintf(w, "Each client produced the run's count of records (below) to one 3-partition topic per codec "+
		"(keyed and unkeyed, three headers one of which may be empty, explicit create-time timestamps), "+
		"a tenth of that more with its idempotent producer, consumed everything in a consumer group committing after "+
		"each poll, and had every record's key, value, headers, timestamp and offset checked against "+
		"what was sent and where the broker acknowledged it; then the group's committed offsets are "+
		"compared with the partitions' ends, and the admin calls (create, describe, list, describe "+
		"configs, delete topics) run. A client with a transactional producer then commits, aborts and commits "+
		"a transaction of a tenth of the count each, and its read_committed consumer must read exactly the "+
		"committed records (the runner checks the topic again with franz-go under both isolation levels). "+
		"For sasl_ssl the one broker also has a SASL_SSL listener (a PEM keystore issued by a CA made for the run) "+
		"and a SCRAM-SHA-512 user made through its PLAINTEXT listener with AlterUserScramCredentials; each client "+
		"connects there trusting the CA, produces a hundredth of the count (at most 100) and consumes them back "+
		"in a group, committing. The whole run took %s.\n\n", total.Round(time.Second))
	fmt.Fprintf(w, "pass: works; **FAIL**: a samsa fault (details below); limit: the client lacks "+
		"the feature against Apache Kafka too; —: not checked for this client.\n")
	head := []string{"client", "version"}
	for _, f := range features {
		head = append(head, strings.TrimPrefix(f, "codec:"))
	}
	for _, mr := range runs {
		fmt.Fprintf(w, "\n## %s\n\n", mr.title)
		fmt.Fprintf(w, "%d records per codec topic, %d with the idempotent producer; took %s.", mr.count,
			max(mr.count/10, 1), mr.took.Round(time.Second))
		if mr.brokers > 0 {
			fmt.Fprintf(w, " %s", clusterNote(mr.brokers))
		}
		fmt.Fprintf(w, "\n\n| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		for _, r := range mr.reports {
			row := []string{r.Client, r.Version}
			for _, f := range features {
				row = append(row, cell(r.Results[f].Status))
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
	}
	fmt.Fprintf(w, "\n## Failures and limits\n")
	for _, mr := range runs {
		fmt.Fprintf(w, "\n### %s\n\n", mr.title)
		any := false
		for _, r := range mr.reports {
			keys := make([]string, 0, len(r.Results))
			for f, res := range r.Results {
				if res.Status == Fail || res.Status == Limit {
					keys = append(keys, f)
				}
			}
			sort.Strings(keys)
			for _, f := range keys {
				res := r.Results[f]
				any = true
				fmt.Fprintf(w, "- %s, %s, %s: %s\n", r.Client, f, strings.ToLower(string(res.Status)), mdEscape(res.Detail))
			}
		}
		if !any {
			fmt.Fprintf(w, "None.\n")
		}
	}
	fmt.Fprintf(w, "\n## Notes\n")
	for _, mr := range runs {
		fmt.Fprintf(w, "\n### %s\n\n", mr.title)
		for _, r := range mr.reports {
			var notes []string
			for _, f := range features {
				if res := r.Results[f]; res.Status == Pass && res.Detail != "" {
					notes = append(notes, f+": "+mdEscape(res.Detail))
				}
			}
			notes = append(notes, r.Notes...)
			fmt.Fprintf(w, "- %s (%s): %s\n", r.Client, r.Took.Round(100*time.Millisecond), strings.Join(notes, "; "))
		}
	}
	writeGroupProtocols(w)
	fmt.Fprint(w, shareGroupsSection)
}

// clusterNote says what a cluster run does and does not exercise, so a
// pass there is not read as more than it is.
func clusterNote(n int) string {
	return fmt.Sprintf("The %d brokers share one ZooKeeper (testkit.LaunchCluster: broker.id 1..%d, "+
		"offsets.topic.replication.factor and default.replication.factor %d); the runner's topics have "+
		"replication factor %d with leaders spread over the brokers, each checker gets all %d addresses as "+
		"its bootstrap list and must find the partition leaders and each group's coordinator from "+
		"Metadata and FindCoordinator. Followers replicate every partition, though no run here "+
		"kills a broker (e2e/replication and e2e/cluster do). The brokers run with "+
		"group.initial.rebalance.delay.ms=0 (the one broker with Kafka's 3 s), so clients that join a "+
		"new group per topic (kcat, the CLI tools) finish sooner here. The brokers talk to each other on a SASL_SSL "+
		"listener (PLAIN between brokers, TLS with the run's CA), which also serves the sasl_ssl column; the "+
		"main scenario runs on a second, PLAINTEXT listener.", n, n, min(3, n), min(3, n), n)
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
