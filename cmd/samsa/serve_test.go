package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/actors/config"
)

func TestServeConfigPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "server.properties")
	props := "broker.id=7\nnum.partitions=2\nlog.dirs=/from/file\nlog.retention.hours=1\nnum.io.threads=8\n"
	if err := os.WriteFile(file, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := newServeCommand()
	if err := cmd.ParseFlags([]string{"--num.partitions", "9"}); err != nil {
		t.Fatal(err)
	}
	env := []string{"SAMSA_NUM_PARTITIONS=5", "SAMSA_LOG_DIRS=/from/env", "SAMSA_BINARY=/x", "HOME=/root"}
	cfg, err := loadBrokerConfig(cmd, file, env)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NumPartitions != 9 { // flag > env > file
		t.Errorf("num.partitions = %d, want the flag's 9", cfg.NumPartitions)
	}
	if strings.Join(cfg.LogDirs, ",") != "/from/env" { // env > file
		t.Errorf("log.dirs = %v, want the environment's", cfg.LogDirs)
	}
	if cfg.BrokerID != 7 || cfg.Value("log.retention.hours") != "1" { // file > defaults
		t.Errorf("broker.id %d log.retention.hours %q", cfg.BrokerID, cfg.Value("log.retention.hours"))
	}
	if !strings.Contains(strings.Join(cfg.Notes, "\n"), "num.io.threads") || strings.Contains(strings.Join(cfg.Warnings, "\n"), "binary") {
		t.Errorf("warnings %q notes %q", cfg.Warnings, cfg.Notes)
	}
}

func TestServeConfigFileFromEnvAndErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(file, []byte("message.max.bytes=lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := newServeCommand()
	_, err := loadBrokerConfig(cmd, "", []string{"SAMSA_CONFIG=" + file})
	if err == nil || !strings.Contains(err.Error(), "message.max.bytes") || !strings.Contains(err.Error(), file) {
		t.Fatalf("bad value in the SAMSA_CONFIG file: %v", err)
	}
	if _, err := loadBrokerConfig(cmd, filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Fatal("missing config file accepted")
	}
}

func TestEveryBrokerConfigIsAFlag(t *testing.T) {
	cmd := newServeCommand()
	for _, d := range config.BrokerDefs() {
		if cmd.Flags().Lookup(d.Name) == nil {
			t.Errorf("no --%s flag", d.Name)
		}
	}
}
