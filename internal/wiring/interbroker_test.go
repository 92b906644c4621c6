package wiring

import (
	"strings"
	"testing"

	"github.com/samsa-io/samsa/actors/config"
)

// The inter-broker client side is read from the inter-broker listener's
// settings; a setting that cannot work stops the start, naming the key.
func TestInterBrokerSecurity(t *testing.T) {
	const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="s" user_broker="s";`
	base := func(kv ...string) map[string]string {
		m := map[string]string{
			"listeners":                                           "PLAINTEXT://127.0.0.1:9092,SASL_PLAINTEXT://127.0.0.1:9093",
			"zookeeper.connect":                                   "127.0.0.1:2181",
			"inter.broker.listener.name":                          "SASL_PLAINTEXT",
			"sasl.enabled.mechanisms":                             "PLAIN,SCRAM-SHA-512",
			"sasl.mechanism.inter.broker.protocol":                "PLAIN",
			"listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	for _, c := range []struct {
		name string
		kv   []string
		want string // "" when it works
	}{
		{"PLAIN from the listener's JAAS", nil, ""},
		{"not enabled", []string{"sasl.enabled.mechanisms", "SCRAM-SHA-512"}, "sasl.mechanism.inter.broker.protocol=PLAIN is not enabled"},
		{"SCRAM-SHA-512 from its own JAAS entry", []string{"listener.name.sasl_plaintext.plain.sasl.jaas.config", "",
			"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="s";`,
			"sasl.enabled.mechanisms", "SCRAM-SHA-512", "sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-512"}, ""},
		{"JAAS without username", []string{"listener.name.sasl_plaintext.plain.sasl.jaas.config",
			`org.apache.kafka.common.security.plain.PlainLoginModule required user_broker="s";`}, "has no username and password"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Load(config.Input{Origin: "test", Values: base(c.kv...)})
			if err != nil {
				t.Fatal(err)
			}
			sec, err := interBrokerSecurity(cfg, nil)
			switch {
			case c.want == "" && (err != nil || sec.SASL == nil || sec.TLS != nil):
				t.Fatalf("%+v, %v", sec, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}
