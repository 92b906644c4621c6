package quota

import (
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/wire/kerr"
)

// Kafka's match types of a DescribeClientQuotas filter component.
const (
	matchExact   kmsg.QuotasMatchType = 0
	matchDefault kmsg.QuotasMatchType = 1
	matchAny     kmsg.QuotasMatchType = 2
)

// Describe answers a DescribeClientQuotas request from configs: the
// entities the filter matches (strict: no entity types beyond the
// filter's), each with its quotas, in a stable order.
func Describe(configs Configs, req *kmsg.DescribeClientQuotasRequest) *kmsg.DescribeClientQuotasResponse {
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	resp.Version = req.Version
	fail := func(msg string) *kmsg.DescribeClientQuotasResponse {
		resp.ErrorCode, resp.ErrorMessage, resp.Entries = kerr.InvalidRequest.Int16(), kmsg.StringPtr(msg), nil
		return resp
	}
	var user, client, ip *kmsg.DescribeClientQuotasRequestComponent
	for i := range req.Components {
		c := &req.Components[i]
		var slot **kmsg.DescribeClientQuotasRequestComponent
		switch c.EntityType {
		case TypeUser:
			slot = &user
		case TypeClientID:
			slot = &client
		case TypeIP:
			slot = &ip
		default:
			return fail("Unexpected quota entity type " + c.EntityType)
		}
		if *slot != nil {
			return fail("Duplicate entity type in filter: " + c.EntityType)
		}
		switch c.MatchType {
		case matchExact:
			if c.Match == nil {
				return fail("Exact match of entity type " + c.EntityType + " requires a name")
			}
		case matchDefault, matchAny:
		default:
			return fail("Unexpected match type " + strconv.Itoa(int(c.MatchType)))
		}
		*slot = c
	}
	if ip != nil && (user != nil || client != nil) {
		return fail("Invalid entity filter component combination: ip with user or client-id")
	}
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	var matched []Entity
	for e := range configs {
		if matches(e.User, user, req.Strict) && matches(e.Client, client, req.Strict) && matches(e.IP, ip, req.Strict) {
			matched = append(matched, e)
		}
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].String() < matched[j].String() })
	for _, e := range matched {
		resp.Entries = append(resp.Entries, describeEntry(e, configs[e]))
	}
	return resp
}

// matches reports whether part p of an entity passes filter component c
// (nil: the filter does not name p's type, which strict refuses when p is
// present).
func matches(p Part, c *kmsg.DescribeClientQuotasRequestComponent, strict bool) bool {
	if c == nil {
		return !strict || !p.Present
	}
	if !p.Present {
		return false
	}
	switch c.MatchType {
	case matchExact:
		return !p.Default && p.Name == *c.Match
	case matchDefault:
		return p.Default
	}
	return true
}

func describeEntry(e Entity, cfg map[string]float64) kmsg.DescribeClientQuotasResponseEntry {
	out := kmsg.NewDescribeClientQuotasResponseEntry()
	add := func(typ string, p Part) {
		if p.Present {
			c := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			c.Type, c.Name = typ, p.Ptr()
			out.Entity = append(out.Entity, c)
		}
	}
	add(TypeUser, e.User)
	add(TypeClientID, e.Client)
	add(TypeIP, e.IP)
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := kmsg.NewDescribeClientQuotasResponseEntryValue()
		v.Key, v.Value = k, cfg[k]
		out.Values = append(out.Values, v)
	}
	return out
}
