package config

import (
	"errors"
	"testing"
)

func TestListenerKey(t *testing.T) {
	for _, tc := range []struct{ name, listener, base string }{
		{"listener.name.external.ssl.keystore.location", "external", "ssl.keystore.location"},
		{"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config", "sasl_ssl", "sasl.jaas.config"},
		{"listener.name.x.max.connections", "x", "max.connections"},
		{"listener.name.x", "", ""},
		{"ssl.keystore.location", "", ""},
	} {
		l, b, ok := ListenerKey(tc.name)
		if l != tc.listener || b != tc.base || ok != (tc.base != "") {
			t.Errorf("%s: %q %q %v", tc.name, l, b, ok)
		}
	}
}

func TestCheckDynamicBroker(t *testing.T) {
	if err := CheckDynamicBroker([]string{"sasl.kerberos.min.time.before.relogin", "log.retention.ms", "listener.name.x.ssl.key.password", "no.such.key"}, false); err != nil {
		t.Fatal(err)
	}
	var de *DynamicKeyError
	err := CheckDynamicBroker([]string{"log.dirs", "ssl.keystore.location"}, false)
	if !errors.As(err, &de) || err.Error() != "Cannot update these configs dynamically: Set(log.dirs)" {
		t.Fatalf("read-only first: %v", err)
	}
	if err = CheckDynamicBroker([]string{"max.connections", "listener.name.x.num.network.threads"}, true); err != nil {
		t.Fatalf("cluster-level keys: %v", err)
	}
	if err = CheckDynamicBroker([]string{"advertised.listeners"}, true); err == nil {
		t.Fatal("per-broker key accepted as a cluster default")
	}
	for _, d := range BrokerDefs() {
		if d.Inert && !d.Dynamic || d.ListenerOnly && !d.PerBroker {
			t.Errorf("%s: inconsistent flags %+v", d.Name, d)
		}
	}
}
