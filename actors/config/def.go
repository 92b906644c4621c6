package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Type is a config's value type, with Kafka's DescribeConfigs v3 codes.
type Type = kmsg.ConfigType

// Source says where an effective value came from, with Kafka's codes.
type Source = kmsg.ConfigSource

// Value types used by the tables.
const (
	Boolean  = kmsg.ConfigTypeBoolean
	String   = kmsg.ConfigTypeString
	Int      = kmsg.ConfigTypeInt
	Short    = kmsg.ConfigTypeShort
	Long     = kmsg.ConfigTypeLong
	Double   = kmsg.ConfigTypeDouble
	List     = kmsg.ConfigTypeList
	Class    = kmsg.ConfigTypeClass
	Password = kmsg.ConfigTypePassword
)

// Sources in the order DescribeConfigs reports them.
const (
	SourceTopic          = kmsg.ConfigSourceDynamicTopicConfig
	SourceDynamicBroker  = kmsg.ConfigSourceDynamicBrokerConfig
	SourceDynamicDefault = kmsg.ConfigSourceDynamicDefaultBrokerConfig
	SourceStatic         = kmsg.ConfigSourceStaticBrokerConfig
	SourceDefault        = kmsg.ConfigSourceDefaultConfig
	SourceGroup          = kmsg.ConfigSourceGroupConfig // a group's own config
)

// ErrInvalid is wrapped by every validation error; the message names the
// key and says what is accepted.
var ErrInvalid = errors.New("config: invalid value")

// ErrUnknown is wrapped when a key is not in the registry.
var ErrUnknown = errors.New("config: unknown key")

// Synonym is a broker key a config inherits its value from. The broker
// value times Scale is the value in the config's unit (hours to ms:
// 3600000); Scale 0 means 1.
type Synonym struct {
	Name  string
	Scale int64
}

// Def declares one config key.
type Def struct {
	Name string
	Type Type
	// Default is the value when nothing is set; Nullable defs with an empty
	// Default have no default (Kafka's null) and inherit from a synonym.
	Default  string
	Nullable bool
	Doc      string
	// Check validates a value that already parsed as Type.
	Check func(string) error
	// Dynamic broker configs can be changed at runtime through
	// AlterConfigs; the others are read-only. Topic configs are always
	// dynamic.
	Dynamic   bool
	Sensitive bool
	// Synonyms are the broker keys this config falls back to, in order.
	Synonyms []Synonym
	// Ignored marks a broker key accepted for compatibility with Kafka's
	// files that samsa does not act on (yet); it is documented as such.
	Ignored bool
	// Inert marks a Dynamic broker key that samsa acts on only as set at
	// start (server.properties, environment, flags): a dynamic value is
	// stored and reported, and has no effect.
	Inert bool
	// PerBroker keys can be set dynamically for one broker only, not as a
	// cluster-wide default (Kafka's per-broker listener and security keys).
	PerBroker bool
	// ListenerOnly keys can be set dynamically only with a listener prefix,
	// listener.name.<listener>.<key> (Kafka's reconfigurable SSL keys).
	ListenerOnly bool
}

// HasDefault reports whether the def has a non-null default.
func (d *Def) HasDefault() bool { return !d.Nullable || d.Default != "" }

// ActsOnDynamic reports whether samsa applies a dynamic value of the key
// (AlterConfigs on the BROKER resource) while it runs.
func (d *Def) ActsOnDynamic() bool { return d.Dynamic && !d.Ignored && !d.Inert }

// DynamicNote says, for a Dynamic key samsa does not act on when it is set
// at runtime, what happens instead; "" for the others.
func (d *Def) DynamicNote() string {
	switch {
	case !d.Dynamic || d.ActsOnDynamic():
		return ""
	case d.Ignored:
		return "samsa stores and reports a dynamic value of this config but does not act on it."
	}
	return "samsa stores and reports a dynamic value of this config but does not act on it; it reads this config at start only (server.properties, environment, flags)."
}

// Documentation is the def's documentation as DescribeConfigs reports it,
// with its DynamicNote.
func (d *Def) Documentation() string {
	note := d.DynamicNote()
	switch {
	case note == "":
		return d.Doc
	case d.Doc == "":
		return note
	}
	return d.Doc + " " + note
}

// InvalidValueError is a value a config key does not accept. It wraps
// ErrInvalid; ClientMessage is the wording clients see (Kafka's).
type InvalidValueError struct {
	Key, Value string
	Reason     error
}

func (e *InvalidValueError) Error() string {
	return fmt.Sprintf("%v: %s=%q: %v", ErrInvalid, e.Key, e.Value, e.Reason)
}

func (e *InvalidValueError) Unwrap() error { return ErrInvalid }

// ClientMessage says what is wrong in the words Kafka uses, without the Go
// package prefix.
func (e *InvalidValueError) ClientMessage() string {
	return fmt.Sprintf("Invalid value %s for configuration %s: %v", e.Value, e.Key, e.Reason)
}

// ClientMessage returns the client-facing message of a config error: the
// InvalidValueError wording when err is one, else err's text.
func ClientMessage(err error) string {
	var iv *InvalidValueError
	if errors.As(err, &iv) {
		return iv.ClientMessage()
	}
	return err.Error()
}

// Validate parses v as the def's type and runs its check. The error is an
// *InvalidValueError naming the key.
func (d *Def) Validate(v string) error {
	if err := checkType(d.Type, v); err != nil {
		return &InvalidValueError{Key: d.Name, Value: v, Reason: err}
	}
	if d.Check != nil {
		if err := d.Check(v); err != nil {
			return &InvalidValueError{Key: d.Name, Value: v, Reason: err}
		}
	}
	return nil
}

func checkType(t Type, v string) error {
	switch t {
	case Boolean:
		if _, err := parseBool(v); err != nil {
			return err
		}
	case Int:
		if _, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32); err != nil {
			return errors.New("want a 32-bit integer")
		}
	case Short:
		if _, err := strconv.ParseInt(strings.TrimSpace(v), 10, 16); err != nil {
			return errors.New("want a 16-bit integer")
		}
	case Long:
		if _, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
			return errors.New("want a 64-bit integer")
		}
	case Double:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) {
			return errors.New("want a number")
		}
	}
	return nil
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New("want true or false")
}

// ParseBool parses a Boolean config value (already validated).
func ParseBool(v string) bool { b, _ := parseBool(v); return b }

// ParseInt parses an Int, Short or Long config value (already validated).
func ParseInt(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n
}

// ParseFloat parses a Double config value (already validated).
func ParseFloat(v string) float64 {
	f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
	return f
}

// ParseList splits a List value on commas, trimming blanks and dropping
// empty items.
func ParseList(v string) []string {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// AtLeast accepts integers (or numbers) >= min.
func AtLeast(min int64) func(string) error {
	return func(v string) error {
		if ParseInt(v) < min {
			return fmt.Errorf("must be at least %d", min)
		}
		return nil
	}
}

// Between accepts integers in [lo, hi].
func Between(lo, hi int64) func(string) error {
	return func(v string) error {
		if n := ParseInt(v); n < lo || n > hi {
			return fmt.Errorf("must be between %d and %d", lo, hi)
		}
		return nil
	}
}

// FractionBetween accepts numbers in [lo, hi].
func FractionBetween(lo, hi float64) func(string) error {
	return func(v string) error {
		if f := ParseFloat(v); f < lo || f > hi {
			return fmt.Errorf("must be between %g and %g", lo, hi)
		}
		return nil
	}
}

// OneOf accepts one of the listed strings (case-sensitive, as Kafka).
func OneOf(choices ...string) func(string) error {
	return func(v string) error {
		if !slices.Contains(choices, strings.TrimSpace(v)) {
			return fmt.Errorf("must be one of %s", strings.Join(choices, ", "))
		}
		return nil
	}
}

// ListOf accepts a comma list whose items are all in choices; empty allowed
// only when allowEmpty.
func ListOf(allowEmpty bool, choices ...string) func(string) error {
	return func(v string) error {
		items := ParseList(v)
		if len(items) == 0 && !allowEmpty {
			return fmt.Errorf("must list at least one of %s", strings.Join(choices, ", "))
		}
		for _, it := range items {
			if !slices.Contains(choices, it) {
				return fmt.Errorf("%q is not one of %s", it, strings.Join(choices, ", "))
			}
		}
		return nil
	}
}
