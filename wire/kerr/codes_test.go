package kerr

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	fkerr "github.com/twmb/franz-go/pkg/kerr"
)

// TestCodesMatchFranzGo cross-checks every code's number, name and
// retriability against an independent table (franz-go's client-side kerr),
// so a typo in either column is caught.
func TestCodesMatchFranzGo(t *testing.T) {
	n := 0
	for c := UnknownServerError; c <= TransactionAbortable; c++ {
		if c == None {
			if c.String() != "NONE" || c.Message() != "" {
				t.Errorf("None: %q %q", c.String(), c.Message())
			}
			continue
		}
		if !c.Known() {
			t.Errorf("code %d has no entry", c)
			continue
		}
		n++
		var ref *fkerr.Error
		if !errors.As(fkerr.ErrorForCode(int16(c)), &ref) {
			t.Errorf("code %d: reference table has no entry", c)
			continue
		}
		// Kafka renamed NOT_LEADER_FOR_PARTITION (KIP-392); the number
		// is what travels.
		renamed := c == NotLeaderOrFollower && ref.Message == "NOT_LEADER_FOR_PARTITION"
		if ref.Message != c.String() && !renamed {
			t.Errorf("code %d: name %q, reference %q", c, c.String(), ref.Message)
		}
		if ref.Retriable != c.Retriable() {
			t.Errorf("code %d (%s): retriable %v, reference %v", c, c.String(), c.Retriable(), ref.Retriable)
		}
		if c.Message() == "" || strings.Contains(c.Message(), "%") {
			t.Errorf("code %d: bad default message %q", c, c.Message())
		}
	}
	if n != 121 {
		t.Errorf("checked %d codes, want 121", n)
	}
}

func TestUnknownCode(t *testing.T) {
	c := Code(4242)
	if c.Known() || c.Retriable() {
		t.Fatal("code 4242 should be unknown and not retriable")
	}
	if c.String() != "UNKNOWN_ERROR_CODE_4242" {
		t.Fatalf("String() = %q", c.String())
	}
	if Code(-2).Known() {
		t.Fatal("code -2 should be unknown")
	}
}

func TestCodeOf(t *testing.T) {
	if CodeOf(nil) != None {
		t.Fatal("nil error should map to None")
	}
	wrapped := fmt.Errorf("partition 3: %w", NotLeaderOrFollower)
	if got := CodeOf(wrapped); got != NotLeaderOrFollower {
		t.Fatalf("CodeOf(wrapped) = %v", got)
	}
	if got := CodeOf(errors.New("disk on fire")); got != UnknownServerError {
		t.Fatalf("CodeOf(plain) = %v", got)
	}
	if !errors.Is(wrapped, NotLeaderOrFollower) {
		t.Fatal("errors.Is should see the wrapped code")
	}
}

func TestNullable(t *testing.T) {
	if None.Nullable() != nil {
		t.Fatal("None should have a nil message")
	}
	if m := InvalidConfig.Nullable(); m == nil || *m != InvalidConfig.Message() {
		t.Fatalf("InvalidConfig.Nullable() = %v", m)
	}
	if InvalidRequest.Int16() != 42 || UnsupportedVersion.Int16() != 35 || UnknownTopicID.Int16() != 100 {
		t.Fatal("code numbers drifted")
	}
}
