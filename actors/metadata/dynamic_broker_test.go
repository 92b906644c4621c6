package metadata

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire/kerr"
)

func alterResult(t *testing.T, s *State, req *kmsg.IncrementalAlterConfigsRequest) (kerr.Code, string, Effects) {
	t.Helper()
	resp, eff := s.IncrementalAlterConfigs(req)
	r := resp.Resources[0]
	return code(r.ErrorCode), deref(r.ErrorMessage), eff
}

func findEntry(res kmsg.DescribeConfigsResponseResource, name string) (kmsg.DescribeConfigsResponseResourceConfig, bool) {
	for _, c := range res.Configs {
		if c.Name == name {
			return c, true
		}
	}
	return kmsg.DescribeConfigsResponseResourceConfig{}, false
}

// Kafka's dynamic broker configs are accepted, stored and described even
// where samsa does not act on them; that is said once, and in the docs.
func TestKafkaDynamicBrokerConfigsAreStored(t *testing.T) {
	s, st := newState(t)
	set := kmsg.IncrementalAlterConfigOpSet
	c, msg, eff := alterResult(t, s, incremental(kmsg.ConfigResourceTypeBroker, "0", "sasl.kerberos.min.time.before.relogin", set, "120000"))
	if c != 0 {
		t.Fatalf("sasl.kerberos.min.time.before.relogin: %v %q", c, msg)
	}
	if got := st.last.DynamicBroker["sasl.kerberos.min.time.before.relogin"]; got != "120000" {
		t.Fatalf("persisted %v", st.last.DynamicBroker)
	}
	if len(eff.Unapplied) != 1 || eff.Unapplied[0].Key != "sasl.kerberos.min.time.before.relogin" || eff.Unapplied[0].Resource != "broker 0" {
		t.Fatalf("unapplied %+v", eff.Unapplied)
	}
	if _, _, eff = alterResult(t, s, incremental(kmsg.ConfigResourceTypeBroker, "0", "sasl.kerberos.min.time.before.relogin", set, "180000")); len(eff.Unapplied) != 0 {
		t.Fatalf("reported twice: %+v", eff.Unapplied)
	}
	e, ok := findEntry(describe(s, kmsg.ConfigResourceTypeBroker, "0", "sasl.kerberos.min.time.before.relogin"), "sasl.kerberos.min.time.before.relogin")
	if !ok || deref(e.Value) != "180000" || e.Source != config.SourceDynamicBroker || e.ReadOnly || !strings.Contains(deref(e.Documentation), "does not act on it") {
		t.Fatalf("described %+v (doc %q)", e, deref(e.Documentation))
	}

	// Keys samsa acts on are not reported.
	if c, msg, eff = alterResult(t, s, incremental(kmsg.ConfigResourceTypeBroker, "", "log.retention.ms", set, "1000")); c != 0 || len(eff.Unapplied) != 0 {
		t.Fatalf("log.retention.ms: %v %q %+v", c, msg, eff.Unapplied)
	}
	// A cluster-wide thread count is stored; samsa reads it at start only.
	c, msg, eff = alterResult(t, s, incremental(kmsg.ConfigResourceTypeBroker, "", "num.network.threads", set, "6"))
	if c != 0 || len(eff.Unapplied) != 1 || !strings.Contains(eff.Unapplied[0].Why, "at start") {
		t.Fatalf("num.network.threads: %v %q %+v", c, msg, eff.Unapplied)
	}
	if e, ok = findEntry(describe(s, kmsg.ConfigResourceTypeBroker, ""), "num.network.threads"); !ok || deref(e.Value) != "6" || e.Source != config.SourceDynamicDefault {
		t.Fatalf("cluster default %+v", e)
	}

	// A listener override: per broker, sensitive when its key is. A
	// keystore override has the listener's keystore read again, and is
	// not reported as unapplied; the SASL one is.
	if c, msg, eff = alterResult(t, s, incremental(kmsg.ConfigResourceTypeBroker, "0",
		"listener.name.external.ssl.keystore.location", set, "/etc/ks.jks",
		"listener.name.external.ssl.keystore.password", set, "secret",
		"listener.name.external.plain.sasl.jaas.config", set, "x required;")); c != 0 {
		t.Fatalf("listener overrides: %v %q", c, msg)
	}
	if len(eff.KeystoresChanged) != 1 || eff.KeystoresChanged[0] != "external" || len(eff.Unapplied) != 1 ||
		eff.Unapplied[0].Key != "listener.name.external.plain.sasl.jaas.config" {
		t.Fatalf("keystores changed %v, unapplied %+v", eff.KeystoresChanged, eff.Unapplied)
	}
	res := describe(s, kmsg.ConfigResourceTypeBroker, "0")
	if e, ok = findEntry(res, "listener.name.external.ssl.keystore.location"); !ok || deref(e.Value) != "/etc/ks.jks" || e.Source != config.SourceDynamicBroker {
		t.Fatalf("override %+v", e)
	}
	for _, k := range []string{"listener.name.external.ssl.keystore.password", "listener.name.external.plain.sasl.jaas.config"} {
		if e, ok = findEntry(res, k); !ok || e.Value != nil || !e.IsSensitive || e.ConfigType != config.Password {
			t.Fatalf("sensitive override %s: %+v", k, e)
		}
	}

	// Legacy AlterConfigs takes them too.
	req := kmsg.NewPtrAlterConfigsRequest()
	r := kmsg.NewAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, "0"
	r.Configs = []kmsg.AlterConfigsRequestResourceConfig{{Name: "sasl.kerberos.min.time.before.relogin", Value: str("60000")}, {Name: "log.cleaner.backoff.ms", Value: str("1000")}}
	req.Resources = append(req.Resources, r)
	if resp, _ := s.AlterConfigs(req); resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("legacy: %v %q", code(resp.Resources[0].ErrorCode), deref(resp.Resources[0].ErrorMessage))
	}

	// A restart reads them back.
	s2, err := New(s.broker, st.last, st, newRand())
	if err != nil {
		t.Fatal(err)
	}
	if e, ok = findEntry(describe(s2, kmsg.ConfigResourceTypeBroker, "0", "log.cleaner.backoff.ms"), "log.cleaner.backoff.ms"); !ok || deref(e.Value) != "1000" {
		t.Fatalf("after restart %+v", e)
	}
}

// Keys Kafka refuses dynamically are refused as Kafka does: INVALID_REQUEST
// naming every such key of the resource.
func TestDynamicBrokerConfigRefusals(t *testing.T) {
	s, st := newState(t)
	set, del := kmsg.IncrementalAlterConfigOpSet, kmsg.IncrementalAlterConfigOpDelete
	for _, tc := range []struct {
		name, resource string
		req            *kmsg.IncrementalAlterConfigsRequest
		want           kerr.Code
		msg            string
	}{
		{"read-only", "0", incremental(kmsg.ConfigResourceTypeBroker, "0", "log.dirs", set, "/x", "broker.id", set, "3", "num.io.threads", set, "4"),
			kerr.InvalidRequest, "Cannot update these configs dynamically: Set(broker.id, log.dirs)"},
		{"ssl without listener", "0", incremental(kmsg.ConfigResourceTypeBroker, "0", "ssl.keystore.location", set, "/ks"),
			kerr.InvalidRequest, "These security configs can be dynamically updated only per-listener using the listener prefix: Set(ssl.keystore.location)"},
		{"per-broker at cluster level", "", incremental(kmsg.ConfigResourceTypeBroker, "", "listeners", set, "PLAINTEXT://:9093", "listener.name.x.ssl.keystore.location", set, "/ks"),
			kerr.InvalidRequest, "Cannot update these configs at default cluster level, broker id must be specified: Set(listener.name.x.ssl.keystore.location, listeners)"},
		{"bad value", "0", incremental(kmsg.ConfigResourceTypeBroker, "0", "sasl.login.refresh.buffer.seconds", set, "99999"),
			kerr.InvalidConfig, "sasl.login.refresh.buffer.seconds"},
		{"unknown", "0", incremental(kmsg.ConfigResourceTypeBroker, "0", "no.such.config", set, "1"),
			kerr.InvalidConfig, "no.such.config"},
	} {
		c, msg, eff := alterResult(t, s, tc.req)
		if c != tc.want || !strings.Contains(msg, tc.msg) || !eff.Empty() || len(eff.Unapplied) != 0 {
			t.Errorf("%s: %v %q, want %v %q", tc.name, c, msg, tc.want, tc.msg)
		}
	}
	if st.last.DynamicBroker != nil || st.last.DynamicDefault != nil {
		t.Fatalf("refusals persisted something: %v %v", st.last.DynamicBroker, st.last.DynamicDefault)
	}
	// Cluster-level listener overrides of connection limits are allowed;
	// deleting a read-only key is a no-op, not an error.
	if c, msg, _ := alterResult(t, s, incremental(kmsg.ConfigResourceTypeBroker, "", "listener.name.x.max.connections", set, "10", "log.dirs", del, nil)); c != 0 {
		t.Fatalf("cluster-level override: %v %q", c, msg)
	}
}
