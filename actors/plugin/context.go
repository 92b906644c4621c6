package plugin

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Context is what a plug-in's Handle works with during one run: the
// producer, its state, its logger. It is valid until the run ends (a
// restart makes a new one).
type Context struct {
	ctx    context.Context // ends when the host stops
	io     context.Context // outlives ctx: what was handled is still delivered and committed on stop
	name   string
	cl     *kgo.Client
	state  *State
	logger *slog.Logger
	reg    prometheus.Registerer

	mu         sync.Mutex
	produceErr error // the first failed produce of this run
}

// ioTimeout bounds the wait for a batch's output and its offset commit.
const ioTimeout = 30 * time.Second

// Context is cancelled when the plug-in stops.
func (c *Context) Context() context.Context { return c.ctx }

// Name is the plug-in's name.
func (c *Context) Name() string { return c.name }

// Logger logs with the plug-in's name attached.
func (c *Context) Logger() *slog.Logger { return c.logger }

// Produce sends r without waiting. The Host waits for every record
// produced while handling a record before committing that record's
// offset, and restarts the plug-in if one fails, so outputs are never
// lost; a record's Topic must be set.
func (c *Context) Produce(r *kgo.Record) {
	c.cl.Produce(c.io, r, func(_ *kgo.Record, err error) {
		if err != nil {
			c.mu.Lock()
			if c.produceErr == nil {
				c.produceErr = err
			}
			c.mu.Unlock()
		}
	})
}

// Metrics is where the plug-in registers its Prometheus collectors; they
// are served with the broker's metrics, labelled plugin="NAME". Open runs
// at every restart, so register in the plug-in's constructor or once (on
// prometheus.AlreadyRegisteredError, use its ExistingCollector).
func (c *Context) Metrics() prometheus.Registerer { return c.reg }

// State is the plug-in's key-value state, or nil unless the plug-in is
// Stateful.
func (c *Context) State() *State { return c.state }

// flush waits for everything produced so far and reports the first
// failure.
func (c *Context) flush() error {
	ctx, cancel := context.WithTimeout(c.io, ioTimeout)
	defer cancel()
	if err := c.cl.Flush(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.produceErr
}
