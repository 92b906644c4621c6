package config

import (
	"math"
	"strconv"
	"strings"
)

// Layers are the broker-side values a resolution reads, besides the
// definitions' defaults. Nil maps are empty layers.
type Layers struct {
	DynamicBroker  map[string]string // this broker's dynamic configs
	DynamicDefault map[string]string // cluster-wide dynamic broker defaults
	Static         map[string]string // server.properties, environment, flags
}

// Entry is one resolved config, as DescribeConfigs reports it.
type Entry struct {
	Name      string
	Value     string
	Null      bool // no value at all (Kafka's null)
	Source    Source
	ReadOnly  bool
	Sensitive bool
	Type      Type
	Doc       string
	// Synonyms is the resolution chain, winner first: every layer that has
	// a value for the config or one of its synonyms.
	Synonyms []SynonymValue
}

// SynonymValue is one link of a resolution chain, with the value as set
// (in the synonym's own unit).
type SynonymValue struct {
	Name   string
	Value  string
	Source Source
}

// chain appends, for broker key name, every layer that has a value.
func (l Layers) chain(dst []SynonymValue, name string) []SynonymValue {
	for _, layer := range []struct {
		m map[string]string
		s Source
	}{{l.DynamicBroker, SourceDynamicBroker}, {l.DynamicDefault, SourceDynamicDefault}, {l.Static, SourceStatic}} {
		if v, ok := layer.m[name]; ok {
			dst = append(dst, SynonymValue{Name: name, Value: v, Source: layer.s})
		}
	}
	if d, ok := BrokerDef(name); ok && d.HasDefault() {
		dst = append(dst, SynonymValue{Name: name, Value: d.Default, Source: SourceDefault})
	}
	return dst
}

// scaleOf returns the unit scale of synonym name in def (1 for the def
// itself).
func scaleOf(def *Def, name string) int64 {
	for _, s := range def.Synonyms {
		if s.Name == name && s.Scale != 0 {
			return s.Scale
		}
	}
	return 1
}

// scaled converts v by scale; negative means unlimited and stays -1.
func scaled(v string, scale int64) string {
	if scale == 1 {
		return v
	}
	n := ParseInt(v)
	if n < 0 {
		return "-1"
	}
	if n > math.MaxInt64/scale {
		return strconv.FormatInt(math.MaxInt64, 10)
	}
	return strconv.FormatInt(n*scale, 10)
}

// ResolveBroker resolves a broker config over its layers and synonyms. A
// listener override (listener.name.<listener>.<key>) resolves over its own
// layers, then those of the key it overrides.
func ResolveBroker(name string, l Layers) (Entry, bool) {
	def, ok := BrokerDef(name)
	if !ok {
		return resolveOverride(name, l)
	}
	chain := l.chain(nil, name)
	for _, s := range def.Synonyms {
		chain = l.chain(chain, s.Name)
	}
	e := entryFor(def, chain, !def.Dynamic)
	return e, true
}

func resolveOverride(name string, l Layers) (Entry, bool) {
	listener, base, ok := ListenerKey(name)
	if !ok {
		return Entry{}, false
	}
	chain := l.chain(nil, name)
	// samsa acts on no listener override: each is stored and reported.
	d := Def{Name: name, Type: String, Dynamic: true, Ignored: true, Sensitive: strings.Contains(name, "password"),
		Doc: "Listener " + listener + "'s override of " + base + ", a config samsa does not know."}
	if def, known := BrokerDef(base); known {
		chain = l.chain(chain, base)
		d.Type, d.Sensitive = def.Type, def.Sensitive
		d.Doc = "Listener " + listener + "'s override of " + base + ". " + def.Doc
	}
	return entryFor(&d, chain, false), true
}

// ResolveTopic resolves a topic config: the topic's own value, then its
// broker synonyms over their layers, then the definition's default.
func ResolveTopic(name string, topic map[string]string, l Layers) (Entry, bool) {
	def, ok := TopicDef(name)
	if !ok {
		return Entry{}, false
	}
	var chain []SynonymValue
	if v, ok := topic[name]; ok {
		chain = append(chain, SynonymValue{Name: name, Value: v, Source: SourceTopic})
	}
	for _, s := range def.Synonyms {
		chain = l.chain(chain, s.Name)
	}
	if len(chain) == 0 && def.HasDefault() {
		chain = append(chain, SynonymValue{Name: name, Value: def.Default, Source: SourceDefault})
	}
	return entryFor(def, chain, false), true
}

func entryFor(def *Def, chain []SynonymValue, readOnly bool) Entry {
	e := Entry{
		Name: def.Name, Type: def.Type, Doc: def.Documentation(),
		ReadOnly: readOnly, Sensitive: def.Sensitive, Synonyms: chain,
		Source: SourceDefault, Null: true,
	}
	if len(chain) > 0 {
		win := chain[0]
		e.Value, e.Source, e.Null = scaled(win.Value, scaleOf(def, win.Name)), win.Source, false
	}
	return e
}

// EffectiveTopic resolves every topic config for a topic: name to value.
// Configs without any value are left out.
func EffectiveTopic(topic map[string]string, l Layers) map[string]string {
	out := make(map[string]string, len(topicDefs))
	for i := range topicDefs {
		e, _ := ResolveTopic(topicDefs[i].Name, topic, l)
		if !e.Null {
			out[e.Name] = e.Value
		}
	}
	return out
}
