package restproxy

import (
	"crypto/sha256"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SASL says how the proxy reaches the broker as the user a request
// authenticates as with HTTP Basic: a client of that user's on a SASL
// listener, so the broker's own authentication and ACLs decide what the
// request may do. Requests without credentials act through the
// PLAINTEXT listener, as User:ANONYMOUS, as any Kafka client there does.
type SASL struct {
	Brokers    []string // a SASL_PLAINTEXT listener
	Mechanisms []string // sasl.enabled.mechanisms: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
}

// brokerClients are the clients one request acts through.
type brokerClients struct {
	cl   *kgo.Client
	adm  *kadm.Client
	user string // "" anonymous
	// opts make another client as the same user (consumer instances).
	opts []kgo.Opt
}

// Confluent's REST Proxy codes for authentication and authorization.
const (
	codeUnauthorized = 40101
	codeForbidden    = 40301
)

// mechanism picks how to authenticate user on the SASL listener:
// PLAIN if enabled (the password goes as is), else SCRAM.
func (s *SASL) mechanism(user, pass string) sasl.Mechanism {
	switch {
	case slices.Contains(s.Mechanisms, "PLAIN"):
		return plain.Auth{User: user, Pass: pass}.AsMechanism()
	case slices.Contains(s.Mechanisms, "SCRAM-SHA-512"):
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
	}
	return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
}

// clientsFor are the clients request r acts through: its Basic user's
// (made, checked against the broker and kept on first use) or the
// anonymous ones.
func (p *Proxy) clientsFor(r *http.Request) (*brokerClients, error) {
	user, pass, basic := r.BasicAuth()
	if !basic || p.cfg.SASL == nil {
		if p.anonymous == nil {
			return nil, errorf(codeUnauthorized, "Authentication required: HTTP Basic with a SASL user of the broker")
		}
		return p.anonymous, nil
	}
	sum := sha256.Sum256([]byte(user + "\x00" + pass))
	key := string(sum[:])
	p.usersMu.Lock()
	c := p.users[key]
	p.usersMu.Unlock()
	if c != nil {
		return c, nil
	}
	opts := []kgo.Opt{kgo.SeedBrokers(p.cfg.SASL.Brokers...), kgo.SASL(p.cfg.SASL.mechanism(user, pass))}
	cl, err := kgo.NewClient(append(p.sharedOpts(), opts...)...)
	if err != nil {
		return nil, errorf(codeKafkaError, "client for %s: %v", user, err)
	}
	c = &brokerClients{cl: cl, adm: kadm.NewClient(cl), user: user, opts: opts}
	if _, err := c.adm.BrokerMetadata(r.Context()); err != nil {
		cl.Close()
		if errors.Is(err, kerr.SaslAuthenticationFailed) || strings.Contains(err.Error(), "SASL") {
			return nil, errorf(codeUnauthorized, "Authentication failed for %s", user)
		}
		return nil, errorf(codeKafkaError, "reaching the broker as %s: %v", user, err)
	}
	p.usersMu.Lock()
	if existing := p.users[key]; existing != nil {
		cl.Close()
		c = existing
	} else {
		p.users[key] = c
	}
	p.usersMu.Unlock()
	return c, nil
}

// kafkaError is err from the broker in Confluent's terms: authorization
// failures are 403, the rest 500 (50002).
func kafkaError(err error, what string) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	for _, denied := range []error{kerr.TopicAuthorizationFailed, kerr.ClusterAuthorizationFailed,
		kerr.GroupAuthorizationFailed, kerr.TransactionalIDAuthorizationFailed} {
		if errors.Is(err, denied) {
			return errorf(codeForbidden, "%s: %v", what, err)
		}
	}
	return errorf(codeKafkaError, "%s: %v", what, err)
}

func (p *Proxy) closeUsers() {
	p.usersMu.Lock()
	defer p.usersMu.Unlock()
	for k, c := range p.users {
		c.cl.Close()
		delete(p.users, k)
	}
}
