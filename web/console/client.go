package console

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// kafka is one page's view of the cluster: a client opened for the
// request, as the signed-in user, closed when the page is written.
type kafka struct {
	ctx context.Context
	cl  *kgo.Client
	adm *kadm.Client
}

// credentials are a signed-in user's SASL name, password and the
// mechanism that accepted them.
type credentials struct {
	User, Password, Mechanism string
}

// clientOpts are the options of every client the console opens for who
// (nil: no SASL).
func (c *Console) clientOpts(who *credentials, extra ...kgo.Opt) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(c.opts.Seeds...), kgo.ClientID("samsa-console")}
	if c.opts.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(c.opts.TLS.Clone()))
	}
	if who != nil {
		opts = append(opts, kgo.SASL(mechanism(*who)))
	}
	return append(opts, extra...)
}

// open opens a client for one request.
func (c *Console) open(ctx context.Context, who *credentials, extra ...kgo.Opt) (*kafka, error) {
	cl, err := kgo.NewClient(c.clientOpts(who, extra...)...)
	if err != nil {
		return nil, err
	}
	return &kafka{ctx: ctx, cl: cl, adm: kadm.NewClient(cl)}, nil
}

func (k *kafka) close() { k.cl.Close() }

// mechanism is franz-go's SASL mechanism for who.
func mechanism(who credentials) sasl.Mechanism {
	switch who.Mechanism {
	case "SCRAM-SHA-512":
		return scram.Auth{User: who.User, Pass: who.Password}.AsSha512Mechanism()
	case "SCRAM-SHA-256":
		return scram.Auth{User: who.User, Pass: who.Password}.AsSha256Mechanism()
	default:
		return plain.Auth{User: who.User, Pass: who.Password}.AsMechanism()
	}
}

// mechanismPreference is the order sign-in tries the listener's
// mechanisms in: a SCRAM exchange never sends the password.
var mechanismPreference = []string{"SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"}

// authenticate finds a mechanism of the listener that accepts user and
// password: PLAIN users come from JAAS and SCRAM users from
// AlterUserScramCredentials, so a user may exist under one mechanism only.
func (c *Console) authenticate(ctx context.Context, user, password string) (*credentials, error) {
	var lastErr error
	for _, m := range mechanismPreference {
		if !slices.Contains(c.opts.Mechanisms, m) {
			continue
		}
		who := &credentials{User: user, Password: password, Mechanism: m}
		cl, err := kgo.NewClient(c.clientOpts(who)...)
		if err != nil {
			return nil, err
		}
		err = cl.Ping(ctx)
		cl.Close()
		if err == nil {
			return who, nil
		}
		lastErr = err
	}
	if lastErr == nil {
		return nil, fmt.Errorf("the listener enables none of %v", mechanismPreference)
	}
	return nil, lastErr
}
