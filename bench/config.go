package bench

import (
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Workload is what a run sends or reads.
type Workload struct {
	Brokers     []string      // bootstrap addresses
	TLS         *tls.Config   // nil: plaintext; else the clients connect over TLS (an SSL listener)
	Topic       string        // created when missing, with Partitions partitions
	Partitions  int32         // partitions of a topic the run creates
	Records     int64         // records to produce or consume in total
	RecordSize  int           // value bytes per record
	KeySize     int           // key bytes per record; 0 = no key
	KeyDist     string        // "none", "uniform" (random keys) or "sequential"
	Rate        int           // records/s over all producers; 0 = as fast as possible
	Producers   int           // concurrent producer clients
	Consumers   int           // concurrent consumer clients (consume: share partitions)
	Acks        string        // "0", "1" or "all"
	Compression string        // none, gzip, snappy, lz4, zstd
	Linger      time.Duration // producer linger
	BatchBytes  int32         // producer max batch bytes
	// MaxBuffered is how many records a producer holds unacknowledged
	// before Produce blocks (kgo.MaxBufferedRecords). 1 makes every
	// record its own request, one at a time per producer: the
	// many-small-requests workload.
	MaxBuffered int
	Idempotent  bool // enable the idempotent producer (needs acks=all)
	// IdleTimeout ends a consume run that has read nothing for this long
	// (a topic holding fewer records than asked for, or none); 0 waits
	// for ever.
	IdleTimeout time.Duration
}

// DefaultWorkload is 1,000,000 records of 100 bytes to 6 partitions, one
// producer, acks=1, linger 5 ms.
func DefaultWorkload() Workload {
	return Workload{
		Brokers: []string{"127.0.0.1:9092"}, Topic: "samsa-bench", Partitions: 6,
		Records: 1_000_000, RecordSize: 100, KeyDist: "none", Producers: 1, Consumers: 1,
		Acks: "1", Compression: "none", Linger: 5 * time.Millisecond, BatchBytes: 1 << 20,
		MaxBuffered: 100_000, IdleTimeout: 10 * time.Second,
	}
}

// Validate reports the first invalid field.
func (w *Workload) Validate() error {
	switch {
	case len(w.Brokers) == 0:
		return fmt.Errorf("bench: no bootstrap brokers")
	case w.Topic == "":
		return fmt.Errorf("bench: no topic")
	case w.Records <= 0:
		return fmt.Errorf("bench: records must be positive, got %d", w.Records)
	case w.RecordSize < 0 || w.KeySize < 0:
		return fmt.Errorf("bench: record and key sizes must not be negative")
	case w.MaxBuffered <= 0:
		return fmt.Errorf("bench: max buffered records must be positive, got %d", w.MaxBuffered)
	case w.Producers <= 0 || w.Consumers <= 0:
		return fmt.Errorf("bench: producers and consumers must be positive")
	case w.Rate < 0:
		return fmt.Errorf("bench: rate must not be negative")
	case w.IdleTimeout < 0:
		return fmt.Errorf("bench: idle timeout must not be negative")
	case w.Partitions <= 0:
		return fmt.Errorf("bench: partitions must be positive")
	}
	if _, err := w.acks(); err != nil {
		return err
	}
	if _, err := w.codec(); err != nil {
		return err
	}
	switch w.KeyDist {
	case "none", "uniform", "sequential":
	default:
		return fmt.Errorf("bench: key distribution %q is not none, uniform or sequential", w.KeyDist)
	}
	if w.Idempotent && w.Acks != "all" && w.Acks != "-1" {
		return fmt.Errorf("bench: the idempotent producer needs acks=all")
	}
	return nil
}

func (w *Workload) acks() (kgo.Acks, error) {
	switch w.Acks {
	case "0":
		return kgo.NoAck(), nil
	case "1":
		return kgo.LeaderAck(), nil
	case "all", "-1":
		return kgo.AllISRAcks(), nil
	}
	return kgo.Acks{}, fmt.Errorf("bench: acks %q is not 0, 1 or all", w.Acks)
}

func (w *Workload) codec() (kgo.CompressionCodec, error) {
	switch strings.ToLower(w.Compression) {
	case "", "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("bench: compression %q is not none, gzip, snappy, lz4 or zstd", w.Compression)
}

// newClient is kgo.NewClient over TLS when the workload says so.
func (w *Workload) newClient(opts ...kgo.Opt) (*kgo.Client, error) {
	if w.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(w.TLS.Clone()))
	}
	return kgo.NewClient(opts...)
}

func (w *Workload) producerOpts() ([]kgo.Opt, error) {
	acks, err := w.acks()
	if err != nil {
		return nil, err
	}
	codec, err := w.codec()
	if err != nil {
		return nil, err
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(w.Brokers...),
		kgo.DefaultProduceTopic(w.Topic),
		kgo.RequiredAcks(acks),
		kgo.ProducerBatchCompression(codec),
		kgo.ProducerLinger(w.Linger),
		kgo.MaxBufferedRecords(w.MaxBuffered),
		kgo.AllowAutoTopicCreation(),
	}
	if w.BatchBytes > 0 {
		opts = append(opts, kgo.ProducerBatchMaxBytes(w.BatchBytes))
	}
	if !w.Idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	return opts, nil
}
