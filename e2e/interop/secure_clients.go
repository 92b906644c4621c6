package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-io/samsa/netloop/tlsconf/tlstest"
)

// The clients' sasl_ssl steps. Every step sends the values sasl-0 ..
// sasl-<n-1> and must read back exactly those, in a consumer group where
// the client has one.

func saslValue(i int) string { return "sasl-" + strconv.Itoa(i) }

// checkSaslValues compares what a step read with what it sent.
func checkSaslValues(got []string, n int) error {
	want := make([]string, n)
	for i := range n {
		want[i] = saslValue(i)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("read %d records, want the %d sent (first read: %v)", len(got), n, got[:min(5, len(got))])
	}
	return nil
}

func saslResult(err error, n int, how string) Result {
	if err != nil {
		return Result{Status: Fail, Detail: oneLine(err.Error())}
	}
	return Result{Status: Pass, Detail: fmt.Sprintf("%s %s, %d records produced and consumed%s", saslMech, "over TLS trusting the run's CA", n, how)}
}

// goSaslSteps are the in-process libraries' steps, by client name.
var goSaslSteps = map[string]saslStep{
	"franz-go": franzSasl,
}

func franzSasl(ctx context.Context, _ string, s *secureListener, topic string, n int) Result {
	opts := []kgo.Opt{kgo.SeedBrokers(s.addr), kgo.DialTLSConfig(tlstest.ClientConfig(s.ca, nil)),
		kgo.SASL(scram.Auth{User: saslUser, Pass: saslPassword}.AsSha512Mechanism())}
	err := func() error {
		p, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic(topic))...)
		if err != nil {
			return err
		}
		defer p.Close()
		for i := range n {
			p.Produce(ctx, kgo.StringRecord(saslValue(i)), nil)
		}
		if err := p.Flush(ctx); err != nil {
			return err
		}
		c, err := kgo.NewClient(append(opts, kgo.ConsumeTopics(topic), kgo.ConsumerGroup(topic+"-g"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())...)
		if err != nil {
			return err
		}
		defer c.Close()
		var got []string
		for len(got) < n {
			fs := c.PollFetches(ctx)
			if ctx.Err() != nil {
				return fmt.Errorf("read %d of %d: %w", len(got), n, ctx.Err())
			}
			if errs := fs.Errors(); len(errs) > 0 {
				return fmt.Errorf("fetch: %w", errs[0].Err)
			}
			fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		}
		if err := c.CommitUncommittedOffsets(ctx); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		return checkSaslValues(got, n)
	}()
	return saslResult(err, n, " in a group (committed)")
}

// saslStep is the external checker's sasl_ssl step: the checker run
// again in its sasl_ssl mode, which prints one RESULT sasl_ssl line.
func (e external) saslStep() saslStep {
	if e.saslCommand == nil {
		return nil
	}
	return func(ctx context.Context, root string, s *secureListener, topic string, n int) Result {
		argv := e.saslCommand(root, s.addr, topic, n)
		argv = append(argv, s.caPath, saslMech, saslUser, saslPassword)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = filepath.Join(root, e.dir)
		if e.env != nil {
			cmd.Env = append(os.Environ(), e.env(root)...)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		rep := newReport(e.client)
		if perr := parseChecker(rep, bytes.NewReader(stdout.Bytes())); perr != nil {
			return Result{Status: Fail, Detail: perr.Error()}
		}
		res, ok := rep.Results[saslFeature]
		if !ok || (err != nil && res.Status == Pass) {
			return Result{Status: Fail, Detail: oneLine(fmt.Sprintf("checker %s: %v: %s", argv[1], err,
				tailLines(stdout.String()+stderr.String(), 5)))}
		}
		return res
	}
}

// kcatSasl produces with kcat and consumes back in a group (-G).
func kcatSasl(ctx context.Context, _ string, s *secureListener, topic string, n int) Result {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		return Result{Status: Fail, Detail: "kcat is not installed (make deps): " + err.Error()}
	}
	auth := []string{"-b", s.addr, "-X", "security.protocol=SASL_SSL", "-X", "ssl.ca.location=" + s.caPath,
		"-X", "sasl.mechanisms=" + saslMech, "-X", "sasl.username=" + saslUser, "-X", "sasl.password=" + saslPassword}
	var in strings.Builder
	for i := range n {
		in.WriteString(saslValue(i) + "\n")
	}
	err = func() error {
		if out, err := runCmd(ctx, []byte(in.String()), kcat, append(auth, "-P", "-t", topic, "-X", "acks=all")...); err != nil {
			return fmt.Errorf("produce: %w: %s", err, tailLines(out, 3))
		}
		out, err := runCmd(ctx, nil, kcat, append(auth, "-G", topic+"-g", "-X", "auto.offset.reset=earliest",
			"-c", strconv.Itoa(n), "-q", topic)...)
		if err != nil {
			return fmt.Errorf("consume: %w: %s", err, tailLines(out, 3))
		}
		return checkSaslValues(strings.Fields(out), n)
	}()
	return saslResult(err, n, " in a group (-G)")
}

// javaSaslProperties is the Java clients' configuration for the
// SASL_SSL listener: a PEM truststore (KIP-651) holding the run's CA.
func javaSaslProperties(s *secureListener) string {
	return "security.protocol=SASL_SSL\nssl.truststore.type=PEM\nssl.truststore.location=" + s.caPath + "\n" +
		"sasl.mechanism=" + saslMech + "\n" +
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="` + saslUser +
		`" password="` + saslPassword + `";` + "\n"
}

// kafkaToolsSasl produces with the console producer and consumes back
// with the console consumer in a group, both given javaSaslProperties.
func kafkaToolsSasl(ctx context.Context, root string, s *secureListener, topic string, n int) Result {
	err := func() error {
		if err := javaSetup(ctx, root); err != nil {
			return err
		}
		cfg := filepath.Join(filepath.Dir(s.caPath), "client.properties")
		if err := os.WriteFile(cfg, []byte(javaSaslProperties(s)), 0o600); err != nil {
			return err
		}
		var in strings.Builder
		for i := range n {
			in.WriteString(saslValue(i) + "\n")
		}
		if _, err := kafkaTool(ctx, root, []byte(in.String()), consoleProducer, "--bootstrap-server", s.addr,
			"--topic", topic, "--producer.config", cfg, "--producer-property", "acks=all"); err != nil {
			return fmt.Errorf("console producer: %w", err)
		}
		out, err := kafkaTool(ctx, root, nil, consoleConsumer, "--bootstrap-server", s.addr, "--topic", topic,
			"--consumer.config", cfg, "--group", topic+"-g", "--from-beginning", "--max-messages", strconv.Itoa(n),
			"--timeout-ms", "30000")
		if err != nil {
			return fmt.Errorf("console consumer: %w", err)
		}
		var got []string
		for _, f := range strings.Fields(out) {
			if strings.HasPrefix(f, "sasl-") {
				got = append(got, f)
			}
		}
		return checkSaslValues(got, n)
	}()
	return saslResult(err, n, " in a group (--group)")
}
