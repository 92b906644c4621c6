package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

func TestParseKeyValues(t *testing.T) {
	kvs, err := parseKeyValues("config", []string{"retention.ms=100", " cleanup.policy =compact", "empty="})
	if err != nil {
		t.Fatal(err)
	}
	want := []keyValue{{"retention.ms", "100"}, {"cleanup.policy", "compact"}, {"empty", ""}}
	if len(kvs) != len(want) {
		t.Fatalf("got %v", kvs)
	}
	for i := range want {
		if kvs[i] != want[i] {
			t.Errorf("pair %d = %+v, want %+v", i, kvs[i], want[i])
		}
	}
	m := configMap(kvs)
	if *m["retention.ms"] != "100" || *m["empty"] != "" {
		t.Errorf("configMap = %v", m)
	}
	for _, bad := range [][]string{{"novalue"}, {"=x"}, {"a=1", "a=2"}} {
		if _, err := parseKeyValues("config", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestBuildAlterConfigs(t *testing.T) {
	got, err := buildAlterConfigs([]string{"retention.ms=5"}, []string{"cleanup.policy"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Op != kadm.SetConfig || got[0].Name != "retention.ms" || *got[0].Value != "5" ||
		got[1].Op != kadm.DeleteConfig || got[1].Name != "cleanup.policy" || got[1].Value != nil {
		t.Errorf("got %+v", got)
	}
	if _, err := buildAlterConfigs(nil, nil); err == nil {
		t.Error("an empty change was accepted")
	}
	if _, err := buildAlterConfigs([]string{"a=1"}, []string{"a"}); err == nil {
		t.Error("set and delete of one key was accepted")
	}
}

// The flags reach the command as documented; no broker is needed to see
// that a bad flag fails before any connection is tried.
func TestTopicCommandRejectsBadInputOffline(t *testing.T) {
	for _, args := range [][]string{
		{"topic", "create", "t", "--config", "oops"},
		{"topic", "list", "--output", "xml"},
		{"topic", "alter-config", "t"},
		{"topic", "create"},
	} {
		root := newRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append(args, "--bootstrap-server", "127.0.0.1:1", "--timeout", "1s"))
		err := root.Execute()
		if err == nil {
			t.Errorf("%v: no error", args)
			continue
		}
		if strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Errorf("%v: tried to connect before validating: %v", args, err)
		}
	}
}

func TestBootstrapDefaultFromEnv(t *testing.T) {
	t.Setenv(bootstrapEnv, "10.1.2.3:19092")
	cmd := newTopicCommand()
	if got := cmd.PersistentFlags().Lookup("bootstrap-server").DefValue; got != "10.1.2.3:19092" {
		t.Errorf("default = %q, want the env value", got)
	}
	t.Setenv(bootstrapEnv, "")
	cmd = newTopicCommand()
	if got := cmd.PersistentFlags().Lookup("bootstrap-server").DefValue; got != defaultBootstrap {
		t.Errorf("default = %q, want %q", got, defaultBootstrap)
	}
}
