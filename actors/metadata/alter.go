package metadata

import (
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire/kerr"
)

// The validation and merge of AlterConfigs and IncrementalAlterConfigs,
// as a pure function of a resource's current dynamic configs and the
// broker's layers: the single-node State commits its result to the
// snapshot, the cluster-mode admin path (actors/catalog) writes it to
// ZooKeeper, and both refuse exactly the same changes.

// ConfigKind is the dynamic config layer a resource alters.
type ConfigKind int

const (
	// TopicConfigs are one topic's (/config/topics/<t> in a cluster).
	TopicConfigs ConfigKind = iota
	// BrokerConfigs are one broker's own (/config/brokers/<id>).
	BrokerConfigs
	// ClusterDefaultConfigs are the brokers' cluster-wide defaults, the
	// BROKER resource with an empty name (/config/brokers/<default>).
	ClusterDefaultConfigs
	// GroupConfigs are one consumer group's.
	GroupConfigs
)

// Alteration is one config change of an AlterConfigs or
// IncrementalAlterConfigs resource.
type Alteration struct {
	Name  string
	Op    kmsg.IncrementalAlterConfigOp
	Value *string
}

// LegacyAlterations are an AlterConfigs resource's configs as SETs (a
// null value leaves the key unset: the legacy API replaces the whole set).
func LegacyAlterations(r kmsg.AlterConfigsRequestResource) []Alteration {
	out := make([]Alteration, len(r.Configs))
	for i, c := range r.Configs {
		out[i] = Alteration{Name: c.Name, Op: kmsg.IncrementalAlterConfigOpSet, Value: c.Value}
	}
	return out
}

// IncrementalAlterations are an IncrementalAlterConfigs resource's
// changes.
func IncrementalAlterations(r kmsg.IncrementalAlterConfigsRequestResource) []Alteration {
	out := make([]Alteration, len(r.Configs))
	for i, c := range r.Configs {
		out[i] = Alteration{Name: c.Name, Op: c.Op, Value: c.Value}
	}
	return out
}

// AlterConfig computes a resource's new dynamic configs from its current
// ones (replace: the legacy AlterConfigs, which replaces the set; else
// the incremental operations apply over current), validated against
// the config registry and Kafka's dynamic-broker rules, with l the
// broker's layers (APPEND and SUBTRACT start from the effective value; a
// group's configs are bounded by the broker's). A nil map with code 0
// means no dynamic configs remain. current is not modified.
func AlterConfig(kind ConfigKind, current map[string]string, changes []Alteration, replace bool, l config.Layers) (map[string]string, kerr.Code, string) {
	next, terr := alter(kind, current, changes, replace, l)
	if terr != nil {
		return nil, terr.code, terr.msg
	}
	return next, kerr.None, ""
}

func alter(kind ConfigKind, current map[string]string, changes []Alteration, replace bool, l config.Layers) (map[string]string, *topicError) {
	seen := make(map[string]bool, len(changes))
	next := make(map[string]string)
	if !replace {
		maps.Copy(next, current)
	}
	if terr := checkDynamic(kind, changes); terr != nil {
		return nil, terr
	}
	for _, c := range changes {
		if seen[c.Name] {
			return nil, fail(kerr.InvalidRequest, "Config %s appears more than once for this resource.", c.Name)
		}
		seen[c.Name] = true
		d, terr := alterDef(kind, c.Name)
		if terr != nil {
			return nil, terr
		}
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if c.Value == nil {
				if replace {
					continue // legacy AlterConfigs: a null value leaves the key unset
				}
				return nil, fail(kerr.InvalidConfig, "Null value for %s; use DELETE to remove a config.", c.Name)
			}
			next[c.Name] = strings.TrimSpace(*c.Value)
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(next, c.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if d == nil || d.Type != config.List {
				return nil, fail(kerr.InvalidConfig, "%s is not a list; APPEND and SUBTRACT apply to lists only.", c.Name)
			}
			if c.Value == nil {
				return nil, fail(kerr.InvalidConfig, "Null value for %s.", c.Name)
			}
			list := config.ParseList(currentValue(kind, c.Name, next, l))
			for _, item := range config.ParseList(*c.Value) {
				has := slices.Contains(list, item)
				if c.Op == kmsg.IncrementalAlterConfigOpAppend && !has {
					list = append(list, item)
				}
				if c.Op == kmsg.IncrementalAlterConfigOpSubtract && has {
					list = slices.DeleteFunc(list, func(x string) bool { return x == item })
				}
			}
			next[c.Name] = strings.Join(list, ",")
		default:
			return nil, fail(kerr.InvalidRequest, "Unknown config operation %d for %s.", c.Op, c.Name)
		}
		if v, ok := next[c.Name]; ok && d != nil {
			if err := d.Validate(v); err != nil {
				return nil, fail(kerr.InvalidConfig, "%s", config.ClientMessage(err))
			}
		}
	}
	if kind == GroupConfigs {
		// Kafka checks a group's configs together, against the broker's
		// bounds.
		if err := config.ValidateGroup(next, l); err != nil {
			return nil, fail(kerr.InvalidConfig, "%s", err.Error())
		}
	}
	if len(next) == 0 {
		return nil, nil
	}
	return next, nil
}

// alterDef finds the definition an alteration must follow. A broker
// config's may be nil: a listener override of a key samsa does not know,
// stored as a string, unchecked (as Kafka does).
func alterDef(kind ConfigKind, name string) (*config.Def, *topicError) {
	switch kind {
	case TopicConfigs:
		d, ok := config.TopicDef(name)
		if !ok {
			return nil, fail(kerr.InvalidConfig, "Unknown topic config %q.", name)
		}
		return d, nil
	case GroupConfigs:
		d, ok := config.GroupDef(name)
		if !ok {
			return nil, fail(kerr.InvalidConfig, "Unknown group config name: %s", name)
		}
		return d, nil
	}
	d, _, ok := config.DynamicBrokerDef(name)
	if !ok {
		return nil, fail(kerr.InvalidConfig, "Unknown broker config %q.", name)
	}
	return d, nil
}

// checkDynamic refuses, for a broker resource, the keys an alteration sets
// that Kafka does not let change at runtime (see config.CheckDynamicBroker):
// INVALID_REQUEST, in Kafka's words. Deleting such a key is allowed: it
// cannot be set.
func checkDynamic(kind ConfigKind, changes []Alteration) *topicError {
	if kind != BrokerConfigs && kind != ClusterDefaultConfigs {
		return nil
	}
	var set []string
	for _, c := range changes {
		if c.Op != kmsg.IncrementalAlterConfigOpDelete && c.Value != nil {
			set = append(set, c.Name)
		}
	}
	if err := config.CheckDynamicBroker(set, kind == ClusterDefaultConfigs); err != nil {
		return fail(kerr.InvalidRequest, "%s", err.Error())
	}
	return nil
}

// currentValue is the value APPEND and SUBTRACT start from: the layer's
// own value when set, else the effective value.
func currentValue(kind ConfigKind, name string, layer map[string]string, l config.Layers) string {
	if v, ok := layer[name]; ok {
		return v
	}
	var e config.Entry
	switch kind {
	case TopicConfigs:
		e, _ = config.ResolveTopic(name, nil, l)
	case GroupConfigs:
		e, _ = config.ResolveGroup(name, nil, l)
	default:
		e, _ = config.ResolveBroker(name, l)
	}
	return e.Value
}
