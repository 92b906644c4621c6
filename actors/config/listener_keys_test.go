package config

import (
	"errors"
	"strings"
	"testing"
)

// SSL listeners load, and their ssl.* keys resolve per listener: the
// listener.name.<listener>.<key> override, else the key, else its
// default; a bad override is refused by its own name.
func TestSSLListenerAndOverrides(t *testing.T) {
	b, err := Load(Input{"server.properties", map[string]string{
		"listeners":                              "PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9093,INTERNAL://127.0.0.1:9094",
		"listener.security.protocol.map":         "PLAINTEXT:PLAINTEXT,SSL:SSL,INTERNAL:SSL",
		"ssl.keystore.location":                  "/etc/kafka/broker.p12",
		"listener.name.internal.ssl.client.auth": "required",
		"listener.name.ssl.ssl.keystore.type":    "PEM",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Listeners) != 3 || b.Listeners[1].Protocol != "SSL" || b.Listeners[2].Protocol != "SSL" || len(b.Warnings) != 0 {
		t.Fatalf("listeners %v, warnings %v", b.Listeners, b.Warnings)
	}
	for _, tc := range []struct{ listener, key, want, from string }{
		{"INTERNAL", "ssl.client.auth", "required", "listener.name.internal.ssl.client.auth"},
		{"SSL", "ssl.client.auth", "none", "ssl.client.auth"},
		{"SSL", "ssl.keystore.type", "PEM", "listener.name.ssl.ssl.keystore.type"},
		{"INTERNAL", "ssl.keystore.type", "JKS", "ssl.keystore.type"},
		{"INTERNAL", "ssl.keystore.location", "/etc/kafka/broker.p12", "ssl.keystore.location"},
	} {
		if v, from := b.ListenerValue(tc.listener, tc.key); v != tc.want || from != tc.from {
			t.Errorf("%s %s = %q from %s, want %q from %s", tc.listener, tc.key, v, from, tc.want, tc.from)
		}
	}
	_, err = Load(Input{"flags", map[string]string{"listener.name.ssl.ssl.client.auth": "maybe"}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "listener.name.ssl.ssl.client.auth") {
		t.Fatalf("err = %v", err)
	}
	_, err = Load(Input{"flags", map[string]string{"ssl.enabled.protocols": "TLSv1.1"}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("TLSv1.1: err = %v", err)
	}
	if b := Defaults(); len(b.Listeners) != 1 || b.Listeners[0].Protocol != "PLAINTEXT" {
		t.Fatalf("default listeners %v", b.Listeners)
	}
}

// An SSL inter-broker listener, picked by security.inter.broker.protocol
// as Kafka does.
func TestSSLInterBrokerListener(t *testing.T) {
	b, err := Load(Input{"flags", map[string]string{
		"zookeeper.connect":              "127.0.0.1:2181",
		"listeners":                      "PLAINTEXT://127.0.0.1:9092,INTERNAL://127.0.0.1:9093",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SSL",
		"security.inter.broker.protocol": "SSL",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Cluster.InterBrokerListener != "INTERNAL" {
		t.Fatalf("inter-broker listener %q, want INTERNAL", b.Cluster.InterBrokerListener)
	}
}
