package plugin

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// State is a plug-in's key-value state: a map in memory, every change
// also written to the plug-in's compacted state topic (one partition,
// keyed), which is read back in full at each start. Changes made while
// handling a record are acknowledged before that record's offset is
// committed, so after a crash the state is at least as new as the
// offsets (at-least-once, like the outputs).
type State struct {
	topic string
	c     *Context
	m     map[string][]byte
}

// Get returns the value for key.
func (s *State) Get(key string) ([]byte, bool) {
	v, ok := s.m[key]
	return v, ok
}

// Put sets key to value.
func (s *State) Put(key string, value []byte) {
	s.m[key] = value
	if value == nil {
		value = []byte{} // nil would be a tombstone
	}
	s.c.Produce(&kgo.Record{Topic: s.topic, Partition: 0, Key: []byte(key), Value: value})
}

// Delete removes key (a tombstone, which compaction later drops).
func (s *State) Delete(key string) {
	delete(s.m, key)
	s.c.Produce(&kgo.Record{Topic: s.topic, Partition: 0, Key: []byte(key)})
}

// Len is the number of keys.
func (s *State) Len() int { return len(s.m) }

// Range calls fn for each key and value, in no order, until fn returns
// false.
func (s *State) Range(fn func(key string, value []byte) bool) {
	for k, v := range s.m {
		if !fn(k, v) {
			return
		}
	}
}

// ensureStateTopic creates the compacted state topic if it is missing.
func ensureStateTopic(ctx context.Context, adm *kadm.Client, topic string) error {
	compact := "compact"
	resp, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": &compact}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("creating state topic %s: %w", topic, err)
	}
	return nil
}

// loadState reads the state topic from its start to the end offset it
// has when loading begins; later records win, tombstones delete.
func loadState(ctx context.Context, opts []kgo.Opt, topic string) (map[string][]byte, error) {
	m := map[string][]byte{}
	admCl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer admCl.Close()
	ends, err := kadm.NewClient(admCl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	end, ok := ends.Lookup(topic, 0)
	if !ok || end.Err != nil {
		return nil, fmt.Errorf("end offset of state topic %s: %v", topic, end.Err)
	}
	if end.Offset == 0 {
		return m, nil
	}
	cl, err := kgo.NewClient(append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	for next := int64(0); next < end.Offset; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := fs.Err0(); err != nil {
			return nil, fmt.Errorf("reading state topic %s: %w", topic, err)
		}
		for _, r := range fs.Records() {
			if r.Offset >= end.Offset {
				continue
			}
			if r.Value == nil {
				delete(m, string(r.Key))
			} else {
				m[string(r.Key)] = r.Value
			}
			next = r.Offset + 1
		}
	}
	return m, nil
}
