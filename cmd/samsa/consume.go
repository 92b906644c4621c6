package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// consumeOptions are `samsa consume`'s flags, kcat's where kcat has them.
type consumeOptions struct {
	client    clientOptions
	partition int32
	offsets   []string
	exitAtEnd bool
	count     int64
	group     string
	template  string
	jsonOut   bool
	keyDelim  string
	isolation string
}

func newConsumeCommand() *cobra.Command {
	o := &consumeOptions{}
	cmd := &cobra.Command{
		Use:   "consume TOPIC",
		Short: "Print a topic's records (like kcat -C)",
		Long: `Print a topic's records, one per line by default (the value), or as a kcat -f
template (%t topic, %p partition, %o offset, %k key, %K key length, %s value,
%S value length, %T timestamp in ms, %h headers as k=v,k=v, %% a percent sign;
\n \t escapes), or as kcat's -J JSON envelope. -o says where to start
(beginning, end, stored, N, -N from the end, s@<ms>) and may add where to stop
(e@<ms>); -e exits once every partition is read to the end it had at start; -c
exits after N records. With -G the records are read in a consumer group, which
commits what was printed. Works against any Kafka-compatible cluster.

  samsa consume orders -e -f '%p/%o %k=%s\n'
  samsa consume orders -G audit -o beginning -J
  samsa consume orders -o s@1700000000000 -o e@1700003600000`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args[0]) },
	}
	o.client.addFlags(cmd, "samsa-consume")
	f := cmd.Flags()
	f.Int32VarP(&o.partition, "partition", "p", -1, "read only this partition (not with -G)")
	f.StringArrayVarP(&o.offsets, "offset", "o", nil, "start: beginning (default), end, stored, N, -N, s@<ms>; stop: e@<ms> (repeatable)")
	f.BoolVarP(&o.exitAtEnd, "exit", "e", false, "exit once the end offsets of when it started are reached")
	f.Int64VarP(&o.count, "count", "c", 0, "exit after this many records")
	f.StringVarP(&o.group, "group", "G", "", "consume in this consumer group, committing what is printed")
	f.StringVarP(&o.template, "format", "f", "", "output template (see above)")
	f.BoolVarP(&o.jsonOut, "json", "J", false, "print each record as a JSON envelope")
	f.StringVarP(&o.keyDelim, "key-delimiter", "K", "", "default format prints key<delimiter>value")
	f.StringVar(&o.isolation, "isolation", "read_uncommitted", "read_uncommitted or read_committed")
	return cmd
}

func (o *consumeOptions) run(cmd *cobra.Command, topic string) error {
	plan, err := parseOffsets(o.offsets)
	if err != nil {
		return err
	}
	formatter, err := newFormatter(o.template, o.jsonOut, unescape(o.keyDelim))
	if err != nil {
		return err
	}
	if o.group != "" && o.partition >= 0 {
		return errors.New("-p and -G: a group's partitions are assigned by the group")
	}
	if plan.start == startStored && o.group == "" {
		return errors.New("-o stored needs a group (-G)")
	}
	readCommitted := false
	switch o.isolation {
	case "read_uncommitted":
	case "read_committed":
		readCommitted = true
	default:
		return fmt.Errorf("--isolation %q: want read_uncommitted or read_committed", o.isolation)
	}
	base, err := o.client.clientOpts()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	adminCl, err := kgo.NewClient(base...)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	adm := kadm.NewClient(adminCl)
	listCtx, cancelList := context.WithTimeout(ctx, defaultTimeout) // the offsets are listed once, before reading
	bounds, err := listBounds(listCtx, adm, topic, o.partition, plan, readCommitted)
	committed := map[int32]int64{}
	if err == nil && o.group != "" {
		committed, err = groupCommitted(listCtx, adm, o.group, topic)
	}
	cancelList()
	adminCl.Close()
	if err != nil {
		return err
	}

	r := &reader{formatter: formatter, limit: o.count, out: bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10),
		pos: map[int32]int64{}, stopAt: map[int32]int64{}}
	if !isTerminal(cmd.OutOrStdout()) { // a bar between records printed on the same terminal would garble them
		r.progress = newProgress(cmd.ErrOrStderr(), o.count, topic, false)
		defer r.progress.finish()
	}
	starts := map[int32]kgo.Offset{}
	for p, b := range bounds {
		at := plan.startOffset(b, committedOr(committed, p))
		starts[p] = kgo.NewOffset().At(at)
		r.pos[p] = at
		if s := plan.stopOffset(b, o.exitAtEnd); s >= 0 {
			r.stopAt[p] = s
		}
	}
	// Control records (transaction markers) come through so that a
	// partition whose last record is a marker is known to be read to its
	// end (-e); they are never printed.
	opts := append(base, kgo.FetchIsolationLevel(isolation(readCommitted)), kgo.KeepControlRecords())
	if o.group != "" {
		opts = append(opts, kgo.ConsumerGroup(o.group), kgo.ConsumeTopics(topic), kgo.AutoCommitMarks(),
			kgo.ConsumeResetOffset(resetOffset(plan)))
	} else {
		opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: starts}))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	err = r.read(ctx, cl, o.group != "")
	if ferr := r.out.Flush(); err == nil {
		err = ferr
	}
	if o.group != "" {
		// What was printed is committed, also on Ctrl-C.
		cctx, cancel := context.WithTimeout(context.Background(), defaultTimeout)
		defer cancel()
		if cerr := cl.CommitMarkedOffsets(cctx); cerr != nil && err == nil {
			err = fmt.Errorf("commit: %s", kafkaErrorText(cerr, ""))
		}
	}
	return err
}

func committedOr(m map[int32]int64, p int32) int64 {
	if c, ok := m[p]; ok {
		return c
	}
	return -1
}

func isolation(readCommitted bool) kgo.IsolationLevel {
	if readCommitted {
		return kgo.ReadCommitted()
	}
	return kgo.ReadUncommitted()
}

// resetOffset is a group's start for partitions without a commit.
func resetOffset(p offsetPlan) kgo.Offset {
	switch p.start {
	case startEnd:
		return kgo.NewOffset().AtEnd()
	case startOffset:
		return kgo.NewOffset().At(p.n)
	case startFromEnd:
		return kgo.NewOffset().AtEnd().Relative(-p.n)
	case startTime:
		return kgo.NewOffset().AfterMilli(p.n)
	}
	return kgo.NewOffset().AtStart()
}

// reader prints records until a stop condition.
type reader struct {
	formatter recordFormatter
	limit     int64 // -c; 0: none
	out       *bufio.Writer
	printed   int64
	progress  *progress       // -c with stderr a terminal and stdout not; else nil
	pos       map[int32]int64 // next offset per partition
	stopAt    map[int32]int64 // partitions that stop, and where (excluded)
	buf       []byte
}

// done reports whether every stopping partition is read and nothing else
// reads, or the count is reached.
func (r *reader) done() bool {
	if r.limit > 0 && r.printed >= r.limit {
		return true
	}
	if len(r.stopAt) == 0 {
		return false
	}
	for p, stop := range r.stopAt {
		if r.pos[p] < stop {
			return false
		}
	}
	return true
}

func (r *reader) read(ctx context.Context, cl *kgo.Client, group bool) error {
	for !r.done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return nil // interrupted: what was printed stands
		}
		var fetchErr error
		fs.EachError(func(t string, p int32, err error) {
			if fetchErr == nil && !errors.Is(err, context.Canceled) {
				fetchErr = fmt.Errorf("fetch %s[%d]: %s", t, p, kafkaErrorText(err, ""))
			}
		})
		if fetchErr != nil {
			return fetchErr
		}
		for it := fs.RecordIter(); !it.Done() && !r.done(); {
			rec := it.Next()
			if stop, ok := r.stopAt[rec.Partition]; ok && rec.Offset >= stop {
				continue
			}
			if rec.Attrs.IsControl() {
				r.pos[rec.Partition] = rec.Offset + 1
				if group {
					cl.MarkCommitRecords(rec)
				}
				continue
			}
			r.buf = r.formatter.format(r.buf[:0], rec)
			if _, err := r.out.Write(r.buf); err != nil {
				return err
			}
			r.pos[rec.Partition] = rec.Offset + 1
			r.printed++
			if group {
				cl.MarkCommitRecords(rec)
			}
		}
		if err := r.out.Flush(); err != nil {
			return err
		}
		r.progress.set(r.printed)
	}
	return nil
}

// listBounds lists the offsets of the topic's partitions (or of the one
// asked) that the plan needs.
func listBounds(ctx context.Context, adm *kadm.Client, topic string, only int32, plan offsetPlan, readCommitted bool) (map[int32]partitionBounds, error) {
	listEnd := adm.ListEndOffsets
	if readCommitted {
		listEnd = adm.ListCommittedOffsets
	}
	ends, err := listEnd(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list offsets of %s: %s", topic, kafkaErrorText(err, ""))
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list offsets of %s: %s", topic, kafkaErrorText(err, ""))
	}
	out := map[int32]partitionBounds{}
	var firstErr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s[%d]: %s", o.Topic, o.Partition, kafkaErrorText(o.Err, ""))
			}
			return
		}
		if only >= 0 && o.Partition != only {
			return
		}
		b := partitionBounds{end: o.Offset, atTime: o.Offset, stopAt: o.Offset}
		if s, ok := starts.Lookup(topic, o.Partition); ok && s.Err == nil {
			b.logStart = s.Offset
		}
		out[o.Partition] = b
	})
	if firstErr != nil {
		return nil, firstErr
	}
	if len(out) == 0 {
		if only >= 0 {
			return nil, fmt.Errorf("%s has no partition %d", topic, only)
		}
		return nil, fmt.Errorf("%s: UNKNOWN_TOPIC_OR_PARTITION: the topic does not exist", topic)
	}
	if plan.start == startTime {
		if err := byTime(ctx, adm, topic, plan.n, out, func(b *partitionBounds, off int64) { b.atTime = off }); err != nil {
			return nil, err
		}
	}
	if plan.stopAt >= 0 {
		if err := byTime(ctx, adm, topic, plan.stopAt, out, func(b *partitionBounds, off int64) { b.stopAt = off }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// byTime sets, for every partition in bounds, the first offset at or
// after ms (partitions with no such record keep their end).
func byTime(ctx context.Context, adm *kadm.Client, topic string, ms int64, bounds map[int32]partitionBounds, set func(*partitionBounds, int64)) error {
	listed, err := adm.ListOffsetsAfterMilli(ctx, ms, topic)
	if err != nil {
		return fmt.Errorf("list offsets of %s by time: %s", topic, kafkaErrorText(err, ""))
	}
	listed.Each(func(o kadm.ListedOffset) {
		b, ok := bounds[o.Partition]
		if !ok || o.Err != nil || o.Offset < 0 {
			return
		}
		set(&b, min(o.Offset, b.end))
		bounds[o.Partition] = b
	})
	return nil
}

// groupCommitted lists the group's committed offsets of topic. A
// coordinator that is not available yet (Kafka creates __consumer_offsets
// on the first group request) is asked again until ctx ends.
func groupCommitted(ctx context.Context, adm *kadm.Client, group, topic string) (map[int32]int64, error) {
	offs, err := adm.FetchOffsets(ctx, group)
	for backoff := 100 * time.Millisecond; err != nil && kerr.IsRetriable(err); backoff = min(2*backoff, time.Second) {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("committed offsets of %s: %s", group, kafkaErrorText(err, ""))
		case <-time.After(backoff):
		}
		offs, err = adm.FetchOffsets(ctx, group)
	}
	if err != nil {
		return nil, fmt.Errorf("committed offsets of %s: %s", group, kafkaErrorText(err, ""))
	}
	out := map[int32]int64{}
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil && o.At >= 0 {
			out[o.Partition] = o.At
		}
	})
	return out, nil
}
