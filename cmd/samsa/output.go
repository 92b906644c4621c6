package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The admin commands turn kadm answers into plain view structs first and
// render those, so rendering is tested without a broker. JSON field names
// are the stable interface for scripts.

type outputFormat int

const (
	formatTable outputFormat = iota
	formatJSON
)

func parseOutputFormat(s string) (outputFormat, error) {
	switch strings.ToLower(s) {
	case "table", "":
		return formatTable, nil
	case "json":
		return formatJSON, nil
	}
	return 0, fmt.Errorf("--output %q: want table or json", s)
}

// kadmConfig is one config entry as kadm returns it.
type kadmConfig = kadm.Config

// topicResult is the outcome of one topic in a create, delete or alter.
type topicResult struct {
	Topic             string `json:"topic"`
	Outcome           string `json:"outcome,omitempty"`
	Partitions        int32  `json:"partitions,omitempty"`
	ReplicationFactor int16  `json:"replication_factor,omitempty"`
	Error             string `json:"error,omitempty"` // Kafka error name, e.g. TOPIC_ALREADY_EXISTS
	ErrorCode         int16  `json:"error_code,omitempty"`
	Message           string `json:"message,omitempty"` // the broker's message, or the error's description
}

// setError records a per-topic error from a kadm response: the Kafka error
// name and code, and the broker's message (or, when the broker sent none,
// the error's standard description).
func (r *topicResult) setError(err error, brokerMessage string) {
	r.Error, r.ErrorCode, r.Message = splitKafkaError(err, brokerMessage)
}

func (r topicResult) errorText() string {
	if r.Message == "" {
		return r.Error
	}
	return r.Error + ": " + r.Message
}

func splitKafkaError(err error, brokerMessage string) (name string, code int16, message string) {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		message = brokerMessage
		if message == "" {
			message = ke.Description
		}
		return ke.Message, ke.Code, message
	}
	if brokerMessage != "" {
		return err.Error(), 0, brokerMessage
	}
	return err.Error(), 0, ""
}

// kafkaErrorText renders an error as "NAME: message".
func kafkaErrorText(err error, brokerMessage string) string {
	name, _, msg := splitKafkaError(err, brokerMessage)
	if msg == "" {
		return name
	}
	return name + ": " + msg
}

// topicSummary is one row of `topic list`.
type topicSummary struct {
	Name              string `json:"name"`
	ID                string `json:"id,omitempty"`
	Internal          bool   `json:"internal,omitempty"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replication_factor"`
	Error             string `json:"error,omitempty"`
}

type partitionView struct {
	Partition   int32   `json:"partition"`
	Leader      int32   `json:"leader"`
	LeaderEpoch int32   `json:"leader_epoch"`
	Replicas    []int32 `json:"replicas"`
	ISR         []int32 `json:"isr"`
	Offline     []int32 `json:"offline_replicas,omitempty"`
	Error       string  `json:"error,omitempty"`
}

type configView struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Null      bool   `json:"null,omitempty"`
	Source    string `json:"source"`
	Sensitive bool   `json:"sensitive,omitempty"`
}

// topicView is one topic of `topic describe`.
type topicView struct {
	Name        string          `json:"name"`
	ID          string          `json:"id,omitempty"`
	Internal    bool            `json:"internal,omitempty"`
	Partitions  []partitionView `json:"partitions"`
	Configs     []configView    `json:"configs"`
	ConfigError string          `json:"config_error,omitempty"`
	Error       string          `json:"error,omitempty"`
	ErrorCode   int16           `json:"error_code,omitempty"`
	Message     string          `json:"message,omitempty"`
}

// topicIDText prints a topic id as Kafka's tools do (URL-safe base64
// without padding), or "" for the all-zero id of brokers without ids.
func topicIDText(id kadm.TopicID) string {
	if id == (kadm.TopicID{}) {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(id[:])
}

func summarizeTopic(d kadm.TopicDetail) topicSummary {
	s := topicSummary{Name: d.Topic, ID: topicIDText(d.ID), Internal: d.IsInternal, Partitions: len(d.Partitions)}
	if p, ok := d.Partitions[0]; ok {
		s.ReplicationFactor = len(p.Replicas)
	}
	if d.Err != nil {
		s.Error = kafkaErrorText(d.Err, "")
	}
	return s
}

func viewTopic(d kadm.TopicDetail) topicView {
	v := topicView{Name: d.Topic, ID: topicIDText(d.ID), Internal: d.IsInternal,
		Partitions: []partitionView{}, Configs: []configView{}}
	if d.Err != nil {
		v.Error, v.ErrorCode, v.Message = splitKafkaError(d.Err, "")
		return v
	}
	for _, p := range d.Partitions.Sorted() {
		pv := partitionView{Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
			Replicas: nonNil(p.Replicas), ISR: nonNil(p.ISR), Offline: p.OfflineReplicas}
		if p.Err != nil {
			pv.Error = kafkaErrorText(p.Err, "")
		}
		v.Partitions = append(v.Partitions, pv)
	}
	return v
}

func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeRows writes v as JSON, or as a table under header (columns
// separated by tabs) whose lines rows prints.
func writeRows(w io.Writer, f outputFormat, v any, header string, rows func(tw io.Writer)) error {
	if f == formatJSON {
		return writeJSON(w, v)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	rows(tw)
	return tw.Flush()
}

func writeResults(w io.Writer, f outputFormat, results []topicResult) error {
	if f == formatJSON {
		return writeJSON(w, results)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tRESULT")
	for _, r := range results {
		text := r.Outcome
		if r.Error != "" {
			text = r.errorText()
		} else if r.Partitions > 0 {
			text += fmt.Sprintf(": %d partitions, replication factor %d", r.Partitions, r.ReplicationFactor)
		}
		fmt.Fprintf(tw, "%s\t%s\n", r.Topic, text)
	}
	return tw.Flush()
}

func writeTopicList(w io.Writer, f outputFormat, rows []topicSummary) error {
	if f == formatJSON {
		return writeJSON(w, rows)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITIONS\tREPLICATION-FACTOR\tID")
	for _, r := range rows {
		name := r.Name
		if r.Internal {
			name += " (internal)"
		}
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t%s\n", name, r.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", name, r.Partitions, r.ReplicationFactor, r.ID)
	}
	return tw.Flush()
}

func writeTopicDescriptions(w io.Writer, f outputFormat, views []topicView) error {
	if f == formatJSON {
		if views == nil {
			views = []topicView{}
		}
		return writeJSON(w, views)
	}
	for i, v := range views {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if v.Error != "" {
			fmt.Fprintf(w, "Topic: %s\tError: %s\n", v.Name, v.Error+messageSuffix(v.Message))
			continue
		}
		rf := 0
		if len(v.Partitions) > 0 {
			rf = len(v.Partitions[0].Replicas)
		}
		fmt.Fprintf(w, "Topic: %s", v.Name)
		if v.ID != "" {
			fmt.Fprintf(w, "\tID: %s", v.ID)
		}
		if v.Internal {
			fmt.Fprint(w, "\tInternal: true")
		}
		fmt.Fprintf(w, "\tPartitions: %d\tReplicationFactor: %d\n", len(v.Partitions), rf)

		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		switch {
		case v.ConfigError != "":
			fmt.Fprintf(tw, "  Configs: %s\n", v.ConfigError)
		case len(v.Configs) == 0:
			fmt.Fprintln(tw, "  Configs: (all defaults)")
		default:
			fmt.Fprintln(tw, "  CONFIG\tVALUE\tSOURCE")
			for _, c := range v.Configs {
				fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Name, configValueText(c), c.Source)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  PARTITION\tLEADER\tEPOCH\tREPLICAS\tISR\tOFFLINE")
		for _, p := range v.Partitions {
			offline := joinIDs(p.Offline)
			if p.Error != "" {
				offline += "  " + p.Error
			}
			fmt.Fprintf(tw, "  %d\t%d\t%d\t%s\t%s\t%s\n", p.Partition, p.Leader, p.LeaderEpoch,
				joinIDs(p.Replicas), joinIDs(p.ISR), offline)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func messageSuffix(m string) string {
	if m == "" {
		return ""
	}
	return ": " + m
}

func configValueText(c configView) string {
	switch {
	case c.Sensitive:
		return "(sensitive)"
	case c.Null:
		return "(null)"
	}
	return c.Value
}

func joinIDs(ids []int32) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(int(id))
	}
	return strings.Join(parts, ",")
}
