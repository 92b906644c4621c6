package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// newTxnAbortCommand aborts a hanging transaction on one partition, as
// kafka-transactions.sh abort does: the partition's leader names the
// producer whose open transaction began at --start-offset
// (DescribeProducers), and an ABORT marker is written for it there
// (WriteTxnMarkers, with the producer's epoch and coordinator epoch). It
// is for a transaction its coordinator lost track of; one the coordinator
// knows is better ended by its producer or left to time out.
func newTxnAbortCommand(opts *adminOptions) *cobra.Command {
	var (
		topic       string
		partition   int32
		startOffset int64
	)
	cmd := &cobra.Command{
		Use:   "abort --topic T --partition P --start-offset O",
		Short: "Abort the hanging transaction that began at an offset of a partition",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if topic == "" || partition < 0 || startOffset < 0 {
				return errors.New("give --topic, --partition and --start-offset (see samsa txn abort --help)")
			}
			return opts.with(cmd, func(s *session) error {
				p, err := hangingProducer(s, opts, topic, partition, startOffset)
				if err != nil {
					return err
				}
				resp, err := s.adm.WriteTxnMarkers(s.ctx, kadm.TxnMarkers{ProducerID: p.ProducerID, ProducerEpoch: p.ProducerEpoch,
					CoordinatorEpoch: p.CoordinatorEpoch, Topics: kadm.TopicsSet{topic: {partition: {}}}})
				if err != nil {
					return opts.requestError("write the ABORT marker", err)
				}
				for _, r := range resp {
					for _, t := range r.Topics {
						for _, pr := range t.Partitions {
							if pr.Err != nil {
								return fmt.Errorf("ABORT marker on %s-%d: %s", pr.Topic, pr.Partition, kafkaErrorText(pr.Err, ""))
							}
						}
					}
				}
				return writeAborted(cmd.OutOrStdout(), s.format, p)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&topic, "topic", "", "the partition's topic")
	f.Int32Var(&partition, "partition", -1, "the partition")
	f.Int64Var(&startOffset, "start-offset", -1, "the first offset of the hanging transaction (samsa consume shows it; DescribeProducers' current_txn_start_offset)")
	return cmd
}

// hangingProducer is the producer whose open transaction on the
// partition began at startOffset.
func hangingProducer(s *session, opts *adminOptions, topic string, partition int32, startOffset int64) (kadm.DescribedProducer, error) {
	described, err := s.adm.DescribeProducers(s.ctx, kadm.TopicsSet{topic: {partition: {}}})
	if err != nil {
		return kadm.DescribedProducer{}, opts.requestError("describe producers", err)
	}
	dp, ok := described[topic].Partitions[partition]
	if !ok {
		return kadm.DescribedProducer{}, fmt.Errorf("%s-%d: no answer for the partition", topic, partition)
	}
	if dp.Err != nil {
		return kadm.DescribedProducer{}, fmt.Errorf("%s-%d: %s", topic, partition, kafkaErrorText(dp.Err, dp.ErrMessage))
	}
	for _, p := range dp.ActiveProducers {
		if p.CurrentTxnStartOffset == startOffset {
			return p, nil
		}
	}
	return kadm.DescribedProducer{}, fmt.Errorf("%s-%d: no open transaction begins at offset %d", topic, partition, startOffset)
}

// abortedTxn is what `samsa txn abort` prints.
type abortedTxn struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	StartOffset   int64  `json:"start_offset"`
	ProducerID    int64  `json:"producer_id"`
	ProducerEpoch int16  `json:"producer_epoch"`
}

func writeAborted(w io.Writer, f outputFormat, p kadm.DescribedProducer) error {
	a := abortedTxn{Topic: p.Topic, Partition: p.Partition, StartOffset: p.CurrentTxnStartOffset, ProducerID: p.ProducerID, ProducerEpoch: p.ProducerEpoch}
	return writeRows(w, f, a, "TOPIC\tPARTITION\tSTART-OFFSET\tPRODUCER-ID\tEPOCH\tRESULT", func(tw io.Writer) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\taborted\n", a.Topic, a.Partition, a.StartOffset, a.ProducerID, a.ProducerEpoch)
	})
}
