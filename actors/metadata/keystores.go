package metadata

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
)

// keystoreKeys are the listener settings whose change makes a TLS
// listener read its keystore again, as Kafka's dynamic keystore update
// does (listener.name.<listener>.ssl.keystore.location and the keys that
// go with it).
var keystoreKeys = []string{"ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password", "ssl.key.password",
	"ssl.keystore.key", "ssl.keystore.certificate.chain"}

// keystoreListener is the listener a keystore override names, "" for
// any other key.
func keystoreListener(name string) string {
	listener, base, ok := config.ListenerKey(name)
	if !ok || !slices.Contains(keystoreKeys, base) {
		return ""
	}
	return strings.ToLower(listener)
}

// appendKeystoreListeners adds the listeners whose keystore settings a
// committed change of this broker's configs set (SET or DELETE: either
// is a new keystore to read). The cluster-wide default cannot carry
// them (config.CheckDynamicBroker refuses listener overrides there).
func appendKeystoreListeners(dst []string, r resourceResult, changes []Alteration) []string {
	if r.typ != kmsg.ConfigResourceTypeBroker || r.name == "" {
		return dst
	}
	for _, c := range changes {
		if l := keystoreListener(c.Name); l != "" && !slices.Contains(dst, l) {
			dst = append(dst, l)
		}
	}
	return dst
}
