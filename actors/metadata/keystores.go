package metadata

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire/kerr"
)

// keystoreKeys are the listener settings whose change makes a TLS
// listener read its keystore again, as Kafka's dynamic keystore update
// does (listener.name.<listener>.ssl.keystore.location and the keys that
// go with it, and the two that say how far its certificate may change).
var keystoreKeys = []string{"ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password", "ssl.key.password",
	"ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.allow.dn.changes", "ssl.allow.san.changes"}

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

// KeystoreCheck reads a TLS listener's keystore as layers resolve its
// settings and says why it could not serve; nil for a listener that is
// not TLS. internal/wiring provides it: the actors know no TLS.
type KeystoreCheck func(listener string, layers config.Layers) error

// SetKeystoreCheck has AlterConfigs check every keystore a change of this
// broker's configs would have a listener read, before anything is
// written.
func (s *State) SetKeystoreCheck(check KeystoreCheck) { s.keystoreCheck = check }

// CheckKeystores refuses a change of this broker's dynamic configs (next,
// after changes) that would give a TLS listener a keystore it cannot
// read: INVALID_CONFIG with the reason, as Kafka validates a dynamic
// keystore update before it is stored. No check (nil) accepts all.
func CheckKeystores(check KeystoreCheck, changes []Alteration, next map[string]string, l config.Layers) (kerr.Code, string) {
	if check == nil {
		return kerr.None, ""
	}
	var listeners []string
	for _, c := range changes {
		if ln := keystoreListener(c.Name); ln != "" && !slices.Contains(listeners, ln) {
			listeners = append(listeners, ln)
		}
	}
	l.DynamicBroker = next
	for _, ln := range listeners {
		if err := check(ln, l); err != nil {
			return kerr.InvalidConfig, fmt.Sprintf("Invalid keystore for listener %s: %v", ln, err)
		}
	}
	return kerr.None, ""
}

// changedKeystoreListeners are the listeners whose keystore settings
// differ between two sets of this broker's dynamic configs (set, changed
// or removed): the cluster's config watch hands the broker the new set
// whole.
func changedKeystoreListeners(before, after map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(before)) {
		if ln := keystoreListener(k); ln != "" && after[k] != before[k] && !slices.Contains(out, ln) {
			out = append(out, ln)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if _, had := before[k]; had {
			continue
		}
		if ln := keystoreListener(k); ln != "" && !slices.Contains(out, ln) {
			out = append(out, ln)
		}
	}
	return out
}
