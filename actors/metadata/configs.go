package metadata

import (
	"maps"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/actors/config"
	"github.com/samsa-io/samsa/wire/kerr"
)

// DescribeConfigs handles a DescribeConfigs request (v1-4) for TOPIC,
// BROKER and GROUP resources. A broker resource named after this broker's
// id lists every broker config with its source; an empty name lists the
// dynamic cluster-wide defaults that are set. A group resource lists the
// group configs, whether or not the group exists, as Kafka.
func (s *State) DescribeConfigs(req *kmsg.DescribeConfigsRequest) *kmsg.DescribeConfigsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, res := range req.Resources {
		out := kmsg.NewDescribeConfigsResponseResource()
		out.ResourceType, out.ResourceName = res.ResourceType, res.ResourceName
		var entries []config.Entry
		switch res.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			if err := ValidateTopicName(res.ResourceName); err != nil {
				// Kafka checks the name before looking the topic up.
				out.ErrorCode, out.ErrorMessage = kerr.InvalidTopicException.Int16(), str(err.Error())
				break
			}
			t, ok := s.byName[res.ResourceName]
			if !ok {
				out.ErrorCode, out.ErrorMessage = kerr.UnknownTopicOrPartition.Int16(), str("This broker has no topic '"+res.ResourceName+"'.")
				break
			}
			entries = topicEntries(t.Configs, s.Layers(), res.ConfigNames)
		case kmsg.ConfigResourceTypeBroker:
			clusterDefault, terr := s.brokerResource(res.ResourceName)
			if terr != nil {
				out.ErrorCode, out.ErrorMessage = terr.code.Int16(), str(terr.msg)
				break
			}
			entries = s.brokerEntries(clusterDefault, res.ConfigNames)
		case kmsg.ConfigResourceTypeGroupConfig:
			if res.ResourceName == "" {
				out.ErrorCode, out.ErrorMessage = kerr.InvalidRequest.Int16(), str("Group name must not be empty")
				break
			}
			for _, d := range config.GroupDefs() {
				if wanted(res.ConfigNames, d.Name) {
					e, _ := config.ResolveGroup(d.Name, s.snap.Groups[res.ResourceName], s.Layers())
					entries = append(entries, e)
				}
			}
		default:
			out.ErrorCode, out.ErrorMessage = kerr.InvalidRequest.Int16(), str("samsa describes TOPIC, BROKER and GROUP config resources only.")
		}
		for _, e := range entries {
			out.Configs = append(out.Configs, describeEntry(e, req))
		}
		resp.Resources = append(resp.Resources, out)
	}
	return resp
}

// brokerEntries lists a BROKER resource's configs: for this broker every
// config samsa knows and every listener override set; for the cluster-wide
// default (clusterDefault) the dynamic defaults set, with only their
// cluster-default synonyms, as Kafka.
func (s *State) brokerEntries(clusterDefault bool, names []string) []config.Entry {
	l := s.Layers()
	var keys []string
	if clusterDefault {
		l = config.Layers{DynamicDefault: s.snap.DynamicDefault}
	} else {
		for _, d := range config.BrokerDefs() {
			keys = append(keys, d.Name)
		}
	}
	keys = append(keys, slices.Collect(maps.Keys(l.DynamicBroker))...)
	keys = append(keys, slices.Collect(maps.Keys(l.DynamicDefault))...)
	slices.Sort(keys)
	var entries []config.Entry
	for _, k := range slices.Compact(keys) {
		if !wanted(names, k) {
			continue
		}
		e, ok := config.ResolveBroker(k, l)
		if !ok {
			continue // a key a newer samsa stored; it has no def here
		}
		if clusterDefault {
			e.Synonyms = slices.DeleteFunc(e.Synonyms, func(sv config.SynonymValue) bool { return sv.Source != config.SourceDynamicDefault })
		}
		entries = append(entries, e)
	}
	return entries
}

// topicEntries lists a topic's configs (names: only those; nil: all),
// its dynamic ones from configs, the rest from the broker's layers.
func topicEntries(configs map[string]string, l config.Layers, names []string) []config.Entry {
	var entries []config.Entry
	for _, d := range config.TopicDefs() {
		if wanted(names, d.Name) {
			e, _ := config.ResolveTopic(d.Name, configs, l)
			entries = append(entries, e)
		}
	}
	return entries
}

// DescribeTopicConfigs is a DescribeConfigs answer for one TOPIC
// resource whose dynamic configs are configs (the cluster-mode path
// reads them from ZooKeeper), resolved against the broker's layers l.
func DescribeTopicConfigs(req *kmsg.DescribeConfigsRequest, res kmsg.DescribeConfigsRequestResource, configs map[string]string, l config.Layers) kmsg.DescribeConfigsResponseResource {
	out := kmsg.NewDescribeConfigsResponseResource()
	out.ResourceType, out.ResourceName = res.ResourceType, res.ResourceName
	for _, e := range topicEntries(configs, l, res.ConfigNames) {
		out.Configs = append(out.Configs, describeEntry(e, req))
	}
	return out
}

func wanted(names []string, name string) bool {
	return names == nil || slices.Contains(names, name)
}

func describeEntry(e config.Entry, req *kmsg.DescribeConfigsRequest) kmsg.DescribeConfigsResponseResourceConfig {
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	c.Name, c.ReadOnly, c.Source, c.IsSensitive = e.Name, e.ReadOnly, e.Source, e.Sensitive
	c.IsDefault = e.Source == config.SourceDefault
	if !e.Null && !e.Sensitive {
		c.Value = str(e.Value)
	}
	c.ConfigType = e.Type
	if req.IncludeDocumentation && e.Doc != "" {
		c.Documentation = str(e.Doc)
	}
	if req.IncludeSynonyms {
		for _, syn := range e.Synonyms {
			sy := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			sy.Name, sy.Source = syn.Name, syn.Source
			if !e.Sensitive {
				sy.Value = str(syn.Value)
			}
			c.ConfigSynonyms = append(c.ConfigSynonyms, sy)
		}
	}
	return c
}

// brokerResource checks a BROKER resource name: "" is the cluster-wide
// default, this broker's id is this broker.
func (s *State) brokerResource(name string) (clusterDefault bool, _ *topicError) {
	if name == "" {
		return true, nil
	}
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil || int32(id) != s.snap.BrokerID {
		return false, fail(kerr.InvalidRequest, "Unexpected broker id %q: this broker is %d (use an empty name for cluster-wide defaults).", name, s.snap.BrokerID)
	}
	return false, nil
}

// alterTarget is the dynamic layer a resource alters.
type alterTarget struct {
	kind    ConfigKind
	topic   *Topic // TopicConfigs only
	current map[string]string
	apply   func(next *Snapshot, values map[string]string)
}

func (s *State) target(typ kmsg.ConfigResourceType, name string) (alterTarget, *topicError) {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		t, ok := s.byName[name]
		if !ok {
			return alterTarget{}, fail(kerr.UnknownTopicOrPartition, "This broker has no topic '%s'.", name)
		}
		return alterTarget{kind: TopicConfigs, topic: t, current: t.Configs, apply: func(next *Snapshot, v map[string]string) {
			for i := range next.Topics {
				if next.Topics[i].ID == t.ID {
					next.Topics[i].Configs = v
				}
			}
		}}, nil
	case kmsg.ConfigResourceTypeBroker:
		clusterDefault, terr := s.brokerResource(name)
		if terr != nil {
			return alterTarget{}, terr
		}
		if clusterDefault {
			return alterTarget{kind: ClusterDefaultConfigs, current: s.snap.DynamicDefault, apply: func(next *Snapshot, v map[string]string) { next.DynamicDefault = v }}, nil
		}
		return alterTarget{kind: BrokerConfigs, current: s.snap.DynamicBroker, apply: func(next *Snapshot, v map[string]string) { next.DynamicBroker = v }}, nil
	case kmsg.ConfigResourceTypeGroupConfig:
		if name == "" {
			return alterTarget{}, fail(kerr.InvalidRequest, "Default group resources are not allowed.")
		}
		// A group need not exist: its configs wait for it.
		return alterTarget{kind: GroupConfigs, current: s.snap.Groups[name], apply: func(next *Snapshot, v map[string]string) {
			if v == nil {
				delete(next.Groups, name)
				return
			}
			if next.Groups == nil {
				next.Groups = make(map[string]map[string]string)
			}
			next.Groups[name] = v
		}}, nil
	}
	return alterTarget{}, fail(kerr.InvalidRequest, "samsa alters TOPIC, BROKER and GROUP config resources only.")
}

type resourceResult struct {
	typ  kmsg.ConfigResourceType
	name string
	err  *topicError
}

// applyAlters validates every resource, then commits the successful ones
// together (unless validateOnly) and returns the live reconfigurations.
func (s *State) applyAlters(resources []resourceResult, changes [][]Alteration, replace, validateOnly bool) ([]resourceResult, Effects) {
	next := s.snap.clone()
	var ok []int
	for i := range resources {
		r := &resources[i]
		if r.err != nil {
			continue
		}
		tg, terr := s.target(r.typ, r.name)
		if terr != nil {
			r.err = terr
			continue
		}
		values, terr := alter(tg.kind, tg.current, changes[i], replace, s.Layers())
		if terr != nil {
			r.err = terr
			continue
		}
		if tg.kind == BrokerConfigs {
			if code, msg := CheckKeystores(s.keystoreCheck, changes[i], values, s.Layers()); code != kerr.None {
				r.err = fail(code, "%s", msg)
				continue
			}
		}
		if !validateOnly {
			tg.apply(next, values)
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return resources, Effects{}
	}
	if err := s.commit(next); err != nil {
		for _, i := range ok {
			resources[i].err = fail(kerr.KafkaStorageError, "Could not persist the configs: %v", err)
		}
		return resources, Effects{}
	}
	var eff Effects
	touched := make(map[TopicID]bool)
	for _, i := range ok {
		eff.Unapplied = append(eff.Unapplied, s.unappliedChanges(resources[i], changes[i])...)
		eff.KeystoresChanged = appendKeystoreListeners(eff.KeystoresChanged, resources[i], changes[i])
	}
	for _, i := range ok {
		for j := range s.snap.Topics {
			t := &s.snap.Topics[j]
			if (resources[i].typ == kmsg.ConfigResourceTypeBroker || resources[i].typ == kmsg.ConfigResourceTypeTopic && t.Name == resources[i].name) && !touched[t.ID] {
				touched[t.ID] = true
				eff.Reconfigure = append(eff.Reconfigure, TopicConfig{Topic: t.Name, ID: t.ID, Config: s.TopicConfig(t)})
			}
		}
	}
	return resources, eff
}

// unappliedChanges are the broker configs a committed alteration set that
// samsa does not act on, not reported before.
func (s *State) unappliedChanges(r resourceResult, changes []Alteration) []UnappliedConfig {
	if r.typ == kmsg.ConfigResourceTypeGroupConfig {
		var out []UnappliedConfig
		for _, c := range changes {
			if key := "group/" + c.Name; c.Op != kmsg.IncrementalAlterConfigOpDelete && c.Value != nil && !s.unapplied[key] && !config.GroupConfigActs(c.Name) {
				s.unapplied[key] = true
				out = append(out, UnappliedConfig{Resource: "group " + r.name, Key: c.Name,
					Why: "group configs are stored and described, and have no effect yet (consumer groups use the broker's group.consumer.* values)."})
			}
		}
		return out
	}
	if r.typ != kmsg.ConfigResourceTypeBroker {
		return nil
	}
	resource := "broker " + r.name
	if r.name == "" {
		resource = "cluster default"
	}
	var out []UnappliedConfig
	for _, c := range changes {
		if c.Op == kmsg.IncrementalAlterConfigOpDelete || c.Value == nil || s.unapplied[c.Name] {
			continue
		}
		d, override, _ := config.DynamicBrokerDef(c.Name)
		why := "samsa stores and reports listener overrides but does not act on them."
		if keystoreListener(c.Name) != "" && r.name != "" {
			continue // the keystore is read again (KeystoresChanged)
		}
		if override && config.IsConnectionLimitKey(c.Name) {
			continue // the listener's connection limit applies live
		}
		if !override {
			if d.ActsOnDynamic() {
				continue
			}
			why = d.DynamicNote()
		}
		s.unapplied[c.Name] = true
		out = append(out, UnappliedConfig{Resource: resource, Key: c.Name, Why: why})
	}
	return out
}

// AlterConfigs handles the legacy AlterConfigs request (v0-2): each
// resource's dynamic configs are replaced by the request's set.
func (s *State) AlterConfigs(req *kmsg.AlterConfigsRequest) (*kmsg.AlterConfigsResponse, Effects) {
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	results := make([]resourceResult, len(req.Resources))
	changes := make([][]Alteration, len(req.Resources))
	for i, r := range req.Resources {
		results[i] = resourceResult{typ: r.ResourceType, name: r.ResourceName}
		changes[i] = LegacyAlterations(r)
	}
	results, eff := s.applyAlters(results, changes, true, req.ValidateOnly)
	for _, r := range results {
		out := kmsg.NewAlterConfigsResponseResource()
		out.ResourceType, out.ResourceName = r.typ, r.name
		if r.err != nil {
			out.ErrorCode, out.ErrorMessage = r.err.code.Int16(), str(r.err.msg)
		}
		resp.Resources = append(resp.Resources, out)
	}
	return resp, eff
}

// IncrementalAlterConfigs handles IncrementalAlterConfigs (v0-1): SET,
// DELETE, and APPEND/SUBTRACT on list configs.
func (s *State) IncrementalAlterConfigs(req *kmsg.IncrementalAlterConfigsRequest) (*kmsg.IncrementalAlterConfigsResponse, Effects) {
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	results := make([]resourceResult, len(req.Resources))
	changes := make([][]Alteration, len(req.Resources))
	for i, r := range req.Resources {
		results[i] = resourceResult{typ: r.ResourceType, name: r.ResourceName}
		changes[i] = IncrementalAlterations(r)
	}
	results, eff := s.applyAlters(results, changes, false, req.ValidateOnly)
	for _, r := range results {
		out := kmsg.NewIncrementalAlterConfigsResponseResource()
		out.ResourceType, out.ResourceName = r.typ, r.name
		if r.err != nil {
			out.ErrorCode, out.ErrorMessage = r.err.code.Int16(), str(r.err.msg)
		}
		resp.Resources = append(resp.Resources, out)
	}
	return resp, eff
}
