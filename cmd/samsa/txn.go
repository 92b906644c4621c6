package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// newTxnCommand groups the transaction admin subcommands (Kafka's
// kafka-transactions.sh list and describe), through kadm: they work
// against Apache Kafka as well as samsa.
func newTxnCommand() *cobra.Command {
	opts := &adminOptions{}
	cmd := &cobra.Command{
		Use:   "txn",
		Short: "List, describe and abort transactions",
		Long: `List the transactional ids the transaction coordinators know, with their state and
producer id, and describe them: producer epoch, timeout, when the open transaction
began and the partitions in it. Output is a table, or JSON with --output json.`,
	}
	addAdminFlags(cmd, opts)
	cmd.AddCommand(newTxnListCommand(opts), newTxnDescribeCommand(opts), newTxnAbortCommand(opts))
	return cmd
}

// errTxnNotDescribed makes describe exit non-zero after printing what it
// could.
var errTxnNotDescribed = errors.New("some transactional ids were not described; see above")

// txnSummary is one row of `samsa txn list`.
type txnSummary struct {
	TransactionalID string `json:"transactional_id"`
	State           string `json:"state"`
	ProducerID      int64  `json:"producer_id"`
	Coordinator     int32  `json:"coordinator"`
}

func newTxnListCommand(opts *adminOptions) *cobra.Command {
	var states []string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List transactional ids with their state and producer id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return opts.with(cmd, func(s *session) error {
				listed, err := s.adm.ListTransactions(s.ctx, nil, states)
				if err != nil {
					return opts.requestError("list transactions", err)
				}
				rows := make([]txnSummary, 0, len(listed))
				for _, l := range listed.Sorted() {
					rows = append(rows, txnSummary{TransactionalID: l.TxnID, State: l.State, ProducerID: l.ProducerID, Coordinator: l.Coordinator})
				}
				return writeTxnList(cmd.OutOrStdout(), s.format, rows)
			})
		},
	}
	cmd.Flags().StringSliceVar(&states, "state", nil, "only transactions in these states (Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort)")
	return cmd
}

// txnView is `samsa txn describe`'s view of one transactional id.
type txnView struct {
	TransactionalID string   `json:"transactional_id"`
	State           string   `json:"state,omitempty"`
	ProducerID      int64    `json:"producer_id"`
	ProducerEpoch   int16    `json:"producer_epoch"`
	TimeoutMs       int32    `json:"timeout_ms"`
	Started         string   `json:"started,omitempty"` // RFC 3339, when a transaction is open
	Coordinator     int32    `json:"coordinator"`
	Partitions      []string `json:"partitions"` // topic-partition
	Error           string   `json:"error,omitempty"`
}

func newTxnDescribeCommand(opts *adminOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "describe TRANSACTIONAL-ID...",
		Short: "Describe transactional ids: producer, epoch, timeout, open transaction's partitions",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, ids []string) error {
			return opts.with(cmd, func(s *session) error { return describeTxns(cmd, opts, s, ids) })
		},
	}
}

// describeTxns prints the descriptions of ids, and fails if one could
// not be described.
func describeTxns(cmd *cobra.Command, opts *adminOptions, s *session, ids []string) error {
	described, err := s.adm.DescribeTransactions(s.ctx, ids...)
	if err != nil && len(described) == 0 {
		return opts.requestError("describe transactions", err)
	}
	views := make([]txnView, 0, len(ids))
	failed := false
	for _, id := range ids {
		d, ok := described[id]
		v := viewTxn(id, d, ok)
		failed = failed || v.Error != ""
		views = append(views, v)
	}
	if err := writeTxnDescriptions(cmd.OutOrStdout(), s.format, views); err != nil {
		return err
	}
	if failed {
		return errTxnNotDescribed
	}
	return nil
}

// viewTxn turns kadm's description into the view printed.
func viewTxn(id string, d kadm.DescribedTransaction, ok bool) txnView {
	v := txnView{TransactionalID: id, ProducerID: -1, ProducerEpoch: -1, Coordinator: -1, Partitions: []string{}}
	if !ok {
		v.Error = "not described (no coordinator answered for it)"
		return v
	}
	if d.Err != nil {
		v.Error = kafkaErrorText(d.Err, "")
		return v
	}
	v.State, v.ProducerID, v.ProducerEpoch, v.TimeoutMs, v.Coordinator = d.State, d.ProducerID, d.ProducerEpoch, d.TimeoutMillis, d.Coordinator
	if d.StartTimestamp > 0 {
		v.Started = time.UnixMilli(d.StartTimestamp).UTC().Format(time.RFC3339Nano)
	}
	for _, tp := range d.Topics.Sorted() {
		for _, p := range tp.Partitions {
			v.Partitions = append(v.Partitions, fmt.Sprintf("%s-%d", tp.Topic, p))
		}
	}
	sort.Strings(v.Partitions)
	return v
}

func writeTxnList(w io.Writer, f outputFormat, rows []txnSummary) error {
	return writeRows(w, f, rows, "TRANSACTIONAL-ID\tSTATE\tPRODUCER-ID\tCOORDINATOR", func(tw io.Writer) {
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", r.TransactionalID, r.State, r.ProducerID, r.Coordinator)
		}
	})
}

func writeTxnDescriptions(w io.Writer, f outputFormat, views []txnView) error {
	header := "TRANSACTIONAL-ID\tSTATE\tPRODUCER-ID\tEPOCH\tTIMEOUT-MS\tSTARTED\tCOORDINATOR\tPARTITIONS"
	return writeRows(w, f, views, header, func(tw io.Writer) {
		for _, v := range views {
			if v.Error != "" {
				fmt.Fprintf(tw, "%s\t%s\n", v.TransactionalID, v.Error)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%d\t%s\n", v.TransactionalID, v.State, v.ProducerID, v.ProducerEpoch,
				v.TimeoutMs, dash(v.Started), v.Coordinator, dash(strings.Join(v.Partitions, ",")))
		}
	})
}
