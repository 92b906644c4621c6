package metadata

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire/kerr"
)

// The config watch hands a cluster broker its dynamic configs whole: a
// listener's keystore is read again when one of its keystore keys was
// set, changed or removed, and not for other keys.
func TestChangedKeystoreListeners(t *testing.T) {
	before := map[string]string{
		"listener.name.ssl.ssl.keystore.location":      "/a.pem",
		"listener.name.internal.ssl.keystore.password": "x",
		"listener.name.other.ssl.keystore.location":    "/o.pem",
		"log.cleaner.threads":                          "2",
	}
	after := map[string]string{
		"listener.name.ssl.ssl.keystore.location":   "/b.pem", // changed
		"listener.name.other.ssl.keystore.location": "/o.pem", // unchanged
		"listener.name.new.ssl.keystore.type":       "PEM",    // set
		"log.cleaner.threads":                       "3",      // not a keystore key
	} // internal's password removed
	got := changedKeystoreListeners(before, after)
	slices.Sort(got)
	if want := []string{"internal", "new", "ssl"}; !slices.Equal(got, want) {
		t.Fatalf("changed %v, want %v", got, want)
	}
	if got := changedKeystoreListeners(after, after); len(got) != 0 {
		t.Fatalf("no change: %v", got)
	}
}

// CheckKeystores asks the check about each listener whose keystore keys
// the change touches, with the new configs as the broker's dynamic layer,
// and turns a refusal into INVALID_CONFIG naming the listener.
func TestCheckKeystores(t *testing.T) {
	v := "/new.pem"
	changes := []Alteration{{Name: "listener.name.SSL.ssl.keystore.location", Op: kmsg.IncrementalAlterConfigOpSet, Value: &v},
		{Name: "log.cleaner.threads", Op: kmsg.IncrementalAlterConfigOpSet, Value: &v}}
	next := map[string]string{"listener.name.SSL.ssl.keystore.location": v}
	var asked []string
	check := func(listener string, l config.Layers) error {
		asked = append(asked, listener)
		if l.DynamicBroker["listener.name.SSL.ssl.keystore.location"] != v {
			t.Errorf("the check sees %v", l.DynamicBroker)
		}
		return errors.New("no private key")
	}
	code, msg := CheckKeystores(check, changes, next, config.Layers{})
	if code != kerr.InvalidConfig || !strings.Contains(msg, "listener ssl") || !strings.Contains(msg, "no private key") {
		t.Fatalf("%v %q", code, msg)
	}
	if !slices.Equal(asked, []string{"ssl"}) {
		t.Fatalf("asked about %v", asked)
	}
	if code, _ := CheckKeystores(nil, changes, next, config.Layers{}); code != kerr.None {
		t.Fatalf("no check: %v", code)
	}
}
