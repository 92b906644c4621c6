package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// errSomeFailed makes the command exit non-zero after printing per-group
// results of which some failed.
var errSomeFailed = errors.New("some groups failed; see above")

// groupSummary is one row of `group list`.
type groupSummary struct {
	Group        string `json:"group"`
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	Coordinator  int32  `json:"coordinator"`
}

// groupResult is one group's outcome in `group delete`.
type groupResult struct {
	Group     string `json:"group"`
	Outcome   string `json:"outcome,omitempty"`
	Error     string `json:"error,omitempty"`
	ErrorCode int16  `json:"error_code,omitempty"`
	Message   string `json:"message,omitempty"`
}

type topicPartitionsView struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

type groupMemberView struct {
	MemberID   string                `json:"member_id"`
	InstanceID string                `json:"instance_id,omitempty"`
	ClientID   string                `json:"client_id"`
	ClientHost string                `json:"client_host"`
	Assignment []topicPartitionsView `json:"assignment"`
}

// groupOffsetView is one partition of a group: its committed offset
// (-1: none), the log end and the lag.
type groupOffsetView struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Committed int64  `json:"committed"`
	End       int64  `json:"log_end"`
	Lag       int64  `json:"lag"`
	Member    string `json:"member_id,omitempty"`
	Metadata  string `json:"metadata,omitempty"`
	Error     string `json:"error,omitempty"`
}

// groupView is one group of `group describe`.
type groupView struct {
	Group        string            `json:"group"`
	State        string            `json:"state"`
	ProtocolType string            `json:"protocol_type"`
	Protocol     string            `json:"protocol"`
	Coordinator  int32             `json:"coordinator"`
	Members      []groupMemberView `json:"members"`
	Offsets      []groupOffsetView `json:"offsets"`
	TotalLag     int64             `json:"total_lag"`
	Error        string            `json:"error,omitempty"`
}

// resetRow is one partition of `group reset-offsets`.
type resetRow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Current   int64  `json:"current"`
	New       int64  `json:"new"`
	Error     string `json:"error,omitempty"`
}

func writeGroupList(w io.Writer, f outputFormat, rows []groupSummary) error {
	if f == formatJSON {
		if rows == nil {
			rows = []groupSummary{}
		}
		return writeJSON(w, rows)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tSTATE\tPROTOCOL-TYPE\tCOORDINATOR")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", r.Group, r.State, dash(r.ProtocolType), r.Coordinator)
	}
	return tw.Flush()
}

func writeGroupResults(w io.Writer, f outputFormat, rows []groupResult) error {
	if f == formatJSON {
		return writeJSON(w, rows)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tRESULT")
	for _, r := range rows {
		res := r.Outcome
		if r.Error != "" {
			res = r.Error
			if r.Message != "" {
				res += ": " + r.Message
			}
		}
		fmt.Fprintf(tw, "%s\t%s\n", r.Group, res)
	}
	return tw.Flush()
}

func writeGroupDescriptions(w io.Writer, f outputFormat, views []groupView) error {
	if f == formatJSON {
		return writeJSON(w, views)
	}
	for i, v := range views {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "Group %s: %s", v.Group, dash(v.State))
		if v.ProtocolType != "" {
			fmt.Fprintf(w, ", %s/%s", v.ProtocolType, dash(v.Protocol))
		}
		fmt.Fprintf(w, ", coordinator %d, %d member(s), total lag %d\n", v.Coordinator, len(v.Members), v.TotalLag)
		if v.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", v.Error)
		}
		if len(v.Members) > 0 {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "  MEMBER\tINSTANCE\tCLIENT\tHOST\tASSIGNMENT")
			for _, m := range v.Members {
				var parts []string
				for _, a := range m.Assignment {
					parts = append(parts, a.Topic+":"+joinInts(a.Partitions))
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", m.MemberID, dash(m.InstanceID), m.ClientID, m.ClientHost, dash(strings.Join(parts, " ")))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		if len(v.Offsets) > 0 {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "  TOPIC\tPARTITION\tCOMMITTED\tLOG-END\tLAG\tMEMBER")
			for _, o := range v.Offsets {
				committed, lag := "-", "-"
				if o.Committed >= 0 {
					committed = strconv.FormatInt(o.Committed, 10)
				}
				if o.Lag >= 0 {
					lag = strconv.FormatInt(o.Lag, 10)
				}
				member := dash(o.Member)
				if o.Error != "" {
					member = o.Error
				}
				fmt.Fprintf(tw, "  %s\t%d\t%s\t%d\t%s\t%s\n", o.Topic, o.Partition, committed, o.End, lag, member)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeResetPlan(w io.Writer, f outputFormat, group string, executed bool, rows []resetRow) error {
	if f == formatJSON {
		if rows == nil {
			rows = []resetRow{}
		}
		return writeJSON(w, struct {
			Group    string     `json:"group"`
			Executed bool       `json:"executed"`
			Offsets  []resetRow `json:"offsets"`
		}{group, executed, rows})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCURRENT\tNEW\tERROR")
	for _, r := range rows {
		cur := "-"
		if r.Current >= 0 {
			cur = strconv.FormatInt(r.Current, 10)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\n", r.Topic, r.Partition, cur, r.New, dash(r.Error))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !executed {
		fmt.Fprintf(w, "Dry run: nothing changed. Add --execute to commit these offsets for group %s.\n", group)
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func joinInts(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ",")
}
