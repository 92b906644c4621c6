package testkit

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestKafka39Resolves checks that the class path holds both the broker
// and the tools of 3.9.1: each main class named here prints its version.
func TestKafka39Resolves(t *testing.T) {
	k := RequireKafka39(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, class := range []string{Kafka39TopicCommand, Kafka39ConfigCommand, Kafka39Server} {
		out, err := k.Run(ctx, class, "--version")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, Kafka39Version) {
			t.Errorf("%s --version = %q, want %s", class, out, Kafka39Version)
		}
	}
}
