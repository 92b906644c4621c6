package config

import (
	"errors"
	"strings"
	"testing"
)

func TestSASLListenerAccepted(t *testing.T) {
	b, err := Load(Input{Origin: "test", Values: map[string]string{
		KeyListeners:              "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config":    `x.PlainLoginModule required user_a="b";`,
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms":   "SCRAM-SHA-256",
		"listener.name.sasl_plaintext.connections.max.reauth.ms": "1000",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Listeners) != 2 || b.Listeners[1].Protocol != "SASL_PLAINTEXT" {
		t.Fatalf("listeners %v", b.Listeners)
	}
	if b.Static["listener.name.sasl_plaintext.sasl.enabled.mechanisms"] != "SCRAM-SHA-256" {
		t.Fatalf("listener key not kept: %v", b.Static)
	}
	for _, w := range b.Warnings {
		if strings.Contains(w, "listener.name.sasl_plaintext") {
			t.Fatalf("listener SASL key warned about: %s", w)
		}
	}
}

// A SASL inter-broker listener needs a mechanism the brokers can log in
// with: Kafka's default, GSSAPI, is refused with the key to set; PLAIN and
// SCRAM are accepted.
func TestSASLInterBrokerMechanism(t *testing.T) {
	base := map[string]string{
		KeyListeners:           "SASL_PLAINTEXT://127.0.0.1:0",
		KeyZooKeeperConnect:    "127.0.0.1:2181",
		KeyInterBrokerListener: "SASL_PLAINTEXT",
	}
	_, err := Load(Input{Origin: "test", Values: base})
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), KeyInterBrokerSASLMechanism+"=GSSAPI") {
		t.Fatalf("GSSAPI: %v", err)
	}
	base[KeyInterBrokerSASLMechanism] = "SCRAM-SHA-512"
	b, err := Load(Input{Origin: "test", Values: base})
	if err != nil {
		t.Fatal(err)
	}
	if b.Cluster.InterBrokerListener != "SASL_PLAINTEXT" {
		t.Fatalf("inter-broker listener %q", b.Cluster.InterBrokerListener)
	}
}
