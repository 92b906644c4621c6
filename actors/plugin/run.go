package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// runOnce is one life of a plug-in: load its state, join its group,
// handle records batch by batch, committing each batch's offsets after
// its output is acknowledged, until the host stops (nil) or the plug-in
// fails (the error).
func (h *Host) runOnce(p Plugin, st *pluginStats, log *slog.Logger) error {
	ctx := h.ctx
	c := &Context{ctx: ctx, io: context.WithoutCancel(ctx), name: p.Name(), logger: log, reg: h.metricsFor(p.Name())}
	if s, ok := p.(Stateful); ok && s.KeepsState() {
		topic := StateTopic(p.Name())
		admCl, err := kgo.NewClient(h.opts.ClientOptions...)
		if err != nil {
			return err
		}
		err = ensureStateTopic(ctx, kadm.NewClient(admCl), topic)
		admCl.Close()
		if err != nil {
			return err
		}
		m, err := loadState(ctx, h.opts.ClientOptions, topic)
		if err != nil {
			return err
		}
		c.state = &State{topic: topic, c: c, m: m}
	}
	cl, err := kgo.NewClient(append(h.opts.ClientOptions,
		kgo.ConsumerGroup(GroupID(p.Name())),
		kgo.ConsumeTopics(p.Topics()...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.ClientID("samsa-plugin-"+p.Name()),
	)...)
	if err != nil {
		return err
	}
	defer cl.Close() // leaves the group, so a restart rejoins at once
	c.cl = cl
	if o, ok := p.(Opener); ok {
		if err := callSafely(func() error { return o.Open(c) }); err != nil {
			return fmt.Errorf("open: %w", err)
		}
	}
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			cl.AllowRebalance()
			return nil
		}
		if err := fetchError(fs); err != nil {
			cl.AllowRebalance()
			return err
		}
		var handled []*kgo.Record
		var failure error
		for _, r := range fs.Records() {
			if ctx.Err() != nil {
				break // stopping: keep what was handled, leave the rest
			}
			if err := callSafely(func() error { return p.Handle(c, r) }); err != nil {
				failure = fmt.Errorf("record %s/%d@%d: %w", r.Topic, r.Partition, r.Offset, err)
				break
			}
			st.handled.Add(1)
			handled = append(handled, r)
		}
		// Whatever was handled is kept: its output and state changes are
		// acknowledged first, then its offsets committed.
		if err := c.flush(); err != nil {
			cl.AllowRebalance()
			return errors.Join(failure, fmt.Errorf("producing: %w", err))
		}
		if err := commit(c, cl, handled); err != nil {
			cl.AllowRebalance()
			return errors.Join(failure, err)
		}
		cl.AllowRebalance()
		if failure != nil || ctx.Err() != nil {
			return failure
		}
	}
}

// commit commits the offsets after the handled records.
func commit(c *Context, cl *kgo.Client, handled []*kgo.Record) error {
	if len(handled) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.io, ioTimeout)
	defer cancel()
	if err := cl.CommitRecords(ctx, handled...); err != nil {
		return fmt.Errorf("committing offsets: %w", err)
	}
	return nil
}

// fetchError is the first error of a poll worth a restart.
func fetchError(fs kgo.Fetches) error {
	errs := fs.Errors()
	if len(errs) == 0 {
		return nil
	}
	fe := errs[0]
	if errors.Is(fe.Err, kgo.ErrClientClosed) {
		return fe.Err
	}
	return fmt.Errorf("fetching %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
}

// callSafely calls fn, turning a panic into an error with its stack.
func callSafely(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
		}
	}()
	return fn()
}
