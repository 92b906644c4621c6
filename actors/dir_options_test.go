package actors

import (
	"testing"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/segment/vfs"
)

func TestDirOptionsReserveBytes(t *testing.T) {
	for _, c := range []struct {
		value string // "" leaves the default
		want  int64
	}{
		{"", 1 << 20},
		{"8388608", 8 << 20},
		{"0", -1}, // off
	} {
		values := map[string]string{"log.dirs": t.TempDir()}
		if c.value != "" {
			values["samsa.log.reserve.bytes"] = c.value
		}
		cfg, err := config.Load(config.Input{Origin: "test", Values: values})
		if err != nil {
			t.Fatal(err)
		}
		if got := dirOptions(cfg, nil, vfs.OS).ReserveBytes; got != c.want {
			t.Errorf("samsa.log.reserve.bytes=%q: segment ReserveBytes %d, want %d", c.value, got, c.want)
		}
	}
	_, err := config.Load(config.Input{Origin: "test", Values: map[string]string{
		"log.dirs": t.TempDir(), "samsa.log.reserve.bytes": "-1"}})
	if err == nil {
		t.Fatal("samsa.log.reserve.bytes=-1 accepted")
	}
	t.Logf("samsa.log.reserve.bytes=-1: %v", err)
}
