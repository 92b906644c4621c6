package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceOptions are `samsa produce`'s flags, kcat's where kcat has them.
type produceOptions struct {
	client      clientOptions
	keyDelim    string
	delim       string
	headers     []string
	partition   int32
	acks        string
	compression string
	nullEmpty   bool
	quiet       bool
}

func newProduceCommand() *cobra.Command {
	o := &produceOptions{}
	cmd := &cobra.Command{
		Use:   "produce TOPIC [FILE...]",
		Short: "Produce records read from stdin or files (like kcat -P)",
		Long: `Produce one record per line (or per -D delimiter) read from the files named, or
stdin when none (or "-"). With -K, each line is split at the first delimiter into
key and value. Headers (-H, repeatable) go on every record. Without -p, records are
partitioned by key as the Java client does (murmur2), keyless ones spread.
Works against any Kafka-compatible cluster (samsa or Apache Kafka).

  echo 'k1:hello' | samsa produce orders -K: -H source=cli
  samsa produce orders -p 0 < values.txt`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args[0], args[1:]) },
	}
	o.client.addFlags(cmd, "samsa-produce")
	f := cmd.Flags()
	f.StringVarP(&o.keyDelim, "key-delimiter", "K", "", "split each record into key and value at the first occurrence of this delimiter")
	f.StringVarP(&o.delim, "delimiter", "D", `\n`, "record delimiter in the input")
	f.StringArrayVarP(&o.headers, "header", "H", nil, "header key=value on every record (repeatable)")
	f.Int32VarP(&o.partition, "partition", "p", -1, "partition to produce to (default: by key)")
	f.StringVar(&o.acks, "acks", "all", "acks: all, 1 or 0")
	f.StringVarP(&o.compression, "compression", "z", "none", "compression: none, gzip, snappy, lz4, zstd")
	f.BoolVarP(&o.nullEmpty, "null-empty", "Z", false, "send empty keys and values as null (kcat -Z)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "do not print the summary")
	return cmd
}

// producerOpts are the franz-go options of the flags.
func (o *produceOptions) producerOpts() ([]kgo.Opt, error) {
	opts, err := o.client.clientOpts()
	if err != nil {
		return nil, err
	}
	switch o.acks {
	case "all", "-1":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	default:
		return nil, fmt.Errorf("--acks %q: want all, 1 or 0", o.acks)
	}
	codec, err := compressionCodec(o.compression)
	if err != nil {
		return nil, err
	}
	opts = append(opts, kgo.ProducerBatchCompression(codec))
	if o.partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	return opts, nil
}

// codecs are the producer's compression codecs by name.
var codecs = map[string]kgo.CompressionCodec{
	"none": kgo.NoCompression(), "": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
	"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
}

func compressionCodec(name string) (kgo.CompressionCodec, error) {
	if c, ok := codecs[strings.ToLower(name)]; ok {
		return c, nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("--compression %q: want none, gzip, snappy, lz4 or zstd", name)
}

func (o *produceOptions) run(cmd *cobra.Command, topic string, files []string) error {
	headers, err := parseHeaders(o.headers)
	if err != nil {
		return err
	}
	delim := unescape(o.delim)
	if delim == "" {
		return fmt.Errorf("--delimiter is empty")
	}
	opts, err := o.producerOpts()
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	p := &producer{cl: cl, topic: topic, partition: o.partition, keyDelim: unescape(o.keyDelim), headers: headers, nullEmpty: o.nullEmpty}
	ctx := cmd.Context()
	if len(files) == 0 {
		files = []string{"-"}
	}
	for _, name := range files {
		if err := p.produceFile(ctx, name, cmd.InOrStdin(), cmd.ErrOrStderr(), delim); err != nil {
			return err
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if err := p.failure(); err != nil {
		return fmt.Errorf("%d of %d records not produced: %s", p.failed.Load(), p.sent, kafkaErrorText(err, ""))
	}
	if !o.quiet {
		fmt.Fprintf(cmd.ErrOrStderr(), "%d records produced to %s\n", p.sent, topic)
	}
	return nil
}

// producer sends records and remembers the first failure.
type producer struct {
	cl        *kgo.Client
	topic     string
	partition int32
	keyDelim  string
	headers   []kgo.RecordHeader
	nullEmpty bool

	sent   int64
	failed atomic.Int64
	mu     sync.Mutex
	first  error
}

// produceFile produces the records of the file named (stdin for "-"),
// with a progress bar of the bytes read on stderr when that is a
// terminal.
func (p *producer) produceFile(ctx context.Context, name string, stdin io.Reader, stderr io.Writer, delim string) error {
	in := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			bar := newProgress(stderr, st.Size(), name, true)
			defer bar.finish()
			in = bar.reader(f)
		}
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	sc.Split(splitAt([]byte(delim)))
	for sc.Scan() {
		p.produce(ctx, sc.Bytes())
	}
	return sc.Err()
}

// produce sends one input record, split into key and value by keyDelim.
func (p *producer) produce(ctx context.Context, line []byte) {
	var key, value []byte
	if p.keyDelim != "" {
		if k, v, ok := bytes.Cut(line, []byte(p.keyDelim)); ok {
			key, value = bytes.Clone(k), bytes.Clone(v)
		} else {
			value = bytes.Clone(line)
		}
	} else {
		value = bytes.Clone(line)
	}
	if !p.nullEmpty {
		if value == nil {
			value = []byte{}
		}
	} else {
		if len(key) == 0 {
			key = nil
		}
		if len(value) == 0 {
			value = nil
		}
	}
	r := &kgo.Record{Topic: p.topic, Key: key, Value: value, Headers: p.headers}
	if p.partition >= 0 {
		r.Partition = p.partition
	}
	p.sent++
	p.cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
		if err != nil {
			p.failed.Add(1)
			p.mu.Lock()
			if p.first == nil {
				p.first = err
			}
			p.mu.Unlock()
		}
	})
}

func (p *producer) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first
}

// splitAt is a bufio.SplitFunc that splits at delim; a last record
// without a delimiter counts, an empty input has none.
func splitAt(delim []byte) bufio.SplitFunc {
	return func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.Index(data, delim); i >= 0 {
			return i + len(delim), data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	}
}
