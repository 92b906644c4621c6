package sasl

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"
)

func TestParseJAAS(t *testing.T) {
	j, err := ParseJAAS(`org.apache.kafka.common.security.plain.PlainLoginModule required
		username="admin" password="admin-secret" user_admin="admin-secret" user_alice="al\"ice; =x";`)
	if err != nil {
		t.Fatal(err)
	}
	if j.Module != "org.apache.kafka.common.security.plain.PlainLoginModule" || j.Flag != "required" {
		t.Fatalf("module %q flag %q", j.Module, j.Flag)
	}
	want := map[string]string{"admin": "admin-secret", "alice": `al"ice; =x`}
	if got := j.PlainUsers(); !maps.Equal(got, want) {
		t.Fatalf("users %v, want %v", got, want)
	}
	if j.Options["username"] != "admin" {
		t.Fatalf("options %v", j.Options)
	}
	bare, err := ParseJAAS("x.ScramLoginModule optional debug=true;")
	if err != nil || bare.Options["debug"] != "true" || bare.Flag != "optional" {
		t.Fatalf("bare words: %+v %v", bare, err)
	}
}

func TestParseJAASRefuses(t *testing.T) {
	for _, in := range []string{
		"",
		"x.PlainLoginModule required", // no ';'
		"x.PlainLoginModule mandatory user_a=\"b\";",       // flag
		"x.PlainLoginModule required user_a;",              // no value
		"x.PlainLoginModule required user_a=\"b;",          // unterminated
		"x.PlainLoginModule required; y.Other required;",   // two modules
		"x.PlainLoginModule required user_a=\"b\" extra=;", // missing value
	} {
		if _, err := ParseJAAS(in); !errors.Is(err, ErrJAAS) {
			t.Errorf("%q: %v, want ErrJAAS", in, err)
		}
	}
}

func TestNewListener(t *testing.T) {
	conf := map[string]string{
		"sasl.enabled.mechanisms":                        "SCRAM-SHA-512",
		"listener.name.client.sasl.enabled.mechanisms":   "PLAIN, SCRAM-SHA-256",
		"listener.name.client.plain.sasl.jaas.config":    `x.PlainLoginModule required user_bob="pw";`,
		"connections.max.reauth.ms":                      "5000",
		"listener.name.client.connections.max.reauth.ms": "1000",
		"listener.name.other.sasl.enabled.mechanisms":    "GSSAPI",
		"listener.name.nojaas.sasl.enabled.mechanisms":   "PLAIN",
		"listener.name.wrongmod.sasl.enabled.mechanisms": "PLAIN",
		"listener.name.wrongmod.plain.sasl.jaas.config":  `x.ScramLoginModule required;`,
	}
	get := func(k string) string { return conf[k] }
	l, err := NewListener("CLIENT", get)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Mechanisms) != 2 || !l.Enabled(Plain) || !l.Enabled(ScramSHA256) || l.Enabled(ScramSHA512) || l.PlainUsers["bob"] != "pw" || l.Reauth != time.Second {
		t.Fatalf("listener %+v", l)
	}
	def, err := NewListener("DEFAULT", get)
	if err != nil || len(def.Mechanisms) != 1 || !def.Enabled(ScramSHA512) || def.Reauth != 5*time.Second {
		t.Fatalf("broker-wide mechanisms: %+v %v", def, err)
	}
	for _, name := range []string{"OTHER", "NOJAAS", "WRONGMOD"} {
		if _, err := NewListener(name, get); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Without sasl.enabled.mechanisms, the mechanisms with a JAAS entry.
	jaasOnly := map[string]string{
		"listener.name.j.scram-sha-512.sasl.jaas.config": "x.ScramLoginModule required;",
		"listener.name.j.plain.sasl.jaas.config":         `x.PlainLoginModule required user_u="p";`,
		"sasl.jaas.config":                               "x.ScramLoginModule required;",
	}
	j, err := NewListener("J", func(k string) string { return jaasOnly[k] })
	if err != nil || !slices.Equal(j.Mechanisms, []string{Plain, ScramSHA512}) {
		t.Fatalf("mechanisms from listener JAAS entries: %+v %v", j, err)
	}
	k, err := NewListener("K", func(k string) string { return jaasOnly[k] })
	if err != nil || !slices.Equal(k.Mechanisms, ScramMechanisms) {
		t.Fatalf("mechanisms from sasl.jaas.config: %+v %v", k, err)
	}
	if _, err := NewListener("NONE", func(string) string { return "" }); err == nil {
		t.Error("a listener without mechanisms was accepted")
	}
}
